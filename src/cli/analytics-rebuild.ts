/**
 * `npm run analytics:rebuild [-- --project <id>]` (node dist/cli/analytics-rebuild.js): recomputes
 * every utilisation figure (of one project, or all) from the bookings and the entry log, while
 * instances keep serving: it takes the analytics job's lease, so no instance refreshes meanwhile.
 * The opening hours recorded per day are kept (the past keeps its hours). Prints what it counted
 * as JSON; exit 0, 1 on failure, 2 on a configuration error. docs/analytics.md.
 */
import { loadConfigOrReport } from '../platform/config.js';
import { withServices } from './with-services.js';

function projectArg(argv: readonly string[]): string | null {
  const i = argv.indexOf('--project');
  return i >= 0 && argv[i + 1] ? argv[i + 1] : null;
}

async function main(): Promise<number> {
  const config = loadConfigOrReport();
  if (!config) return 2;
  await withServices(config, async (services) => {
    const started = performance.now();
    const report = await services.analytics.rebuild(projectArg(process.argv.slice(2)));
    const ms = Math.round(performance.now() - started);
    process.stdout.write(JSON.stringify({ ...report, ms }, null, 2) + '\n');
  });
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error('analytics rebuild failed:', err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
