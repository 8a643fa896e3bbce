/**
 * `npm run reseal-secrets` (node dist/cli/reseal-secrets.js): the second step of a SECRETS_KEY
 * rotation. With the new key in SECRETS_KEY and the old one in SECRETS_KEY_PREVIOUS, it seals
 * every stored secret (PINs, webhook secrets, face photos, visitor codes, feed tokens) again
 * under the new key and recomputes their keyed tags, while instances keep serving. Prints what
 * it moved as JSON; exit 0, 1 on failure, 2 on a configuration error, 3 when some values open
 * under none of the keys given (left as they are, counted under `unreadable`). docs/operations.md.
 */
import { loadConfigOrReport } from '../platform/config.js';
import { withServices } from './with-services.js';

async function main(): Promise<number> {
  const config = loadConfigOrReport();
  if (!config) return 2;
  if (!config.secretsKey) {
    console.error('configuration error: SECRETS_KEY must name the key to seal under (the old one goes in SECRETS_KEY_PREVIOUS)');
    return 2;
  }
  const unreadable = await withServices(config, async (services) => {
    const started = performance.now();
    const report = await services.resealSecrets();
    const ms = Math.round(performance.now() - started);
    process.stdout.write(JSON.stringify({ ...report, columns: services.sealedColumns(), ms }, null, 2) + '\n');
    return Object.keys(report.unreadable).length > 0;
  });
  if (unreadable) {
    console.error('some values open under none of the keys given (SECRETS_KEY, SECRETS_KEY_PREVIOUS): see "unreadable"');
    return 3;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error('reseal failed:', err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
