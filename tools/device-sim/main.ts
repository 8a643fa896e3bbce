/**
 * Device stand-ins for a person to try the vendor transports: `npm run device:sim -- --kind isapi` starts a
 * HikVision ISAPI terminal on loopback and prints what to put in the site document; `--kind zkteco
 * [--url http://127.0.0.1:3000] [--sn ZK0001] [--poll-ms 2000] [--comm-key …]` starts a ZKTeco PUSH terminal
 * that polls the service and prints the users it holds after each change.
 */
import { IsapiTerminal } from './isapi-terminal.js';
import { ZktecoTerminal } from './zkteco-terminal.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function isapi(): Promise<void> {
  const terminal = new IsapiTerminal({ capacity: Number(arg('capacity') ?? 3000) });
  const { url } = await terminal.start(Number(arg('port') ?? 0));
  const device = {
    key: 'isapi-sim',
    name: 'ISAPI stand-in',
    kind: 'face-card-reader',
    transport: { kind: 'isapi', baseUrl: url, username: terminal.username, password: terminal.currentPassword },
  };
  console.log(`ISAPI terminal stand-in at ${url} (Digest: ${terminal.username} / ${terminal.currentPassword})`);
  console.log("Site document device entry (an access group's devices[]):");
  console.log(JSON.stringify(device, null, 2));
  process.on('SIGINT', () => void terminal.stop().then(() => process.exit(0)));
}

function zkteco(): void {
  const sn = arg('sn') ?? 'ZK0001';
  const url = arg('url') ?? 'http://127.0.0.1:3000';
  const pollMs = Number(arg('poll-ms') ?? 2000);
  const terminal = new ZktecoTerminal({ serverUrl: url, serialNumber: sn, pollMs, commKey: arg('comm-key'), timeZone: arg('tz') });
  const device = {
    key: 'zkteco-sim',
    name: 'ZKTeco stand-in',
    kind: 'face-card-reader',
    transport: { kind: 'zkteco-push', serialNumber: sn },
  };
  console.log(`ZKTeco PUSH terminal stand-in ${sn} polling ${url}/iclock every ${pollMs} ms`);
  console.log("Site document device entry (an access group's devices[]):");
  console.log(JSON.stringify(device, null, 2));
  terminal.start();
  let seen = '';
  setInterval(() => {
    const now = JSON.stringify(terminal.users());
    if (now !== seen) console.log(`[zkteco ${sn}] users: ${now}`);
    seen = now;
  }, 1000);
  process.on('SIGINT', () => {
    terminal.stop();
    process.exit(0);
  });
}

switch (arg('kind')) {
  case 'isapi':
    await isapi();
    break;
  case 'zkteco':
    zkteco();
    break;
  default:
    console.error('usage: npm run device:sim -- --kind isapi|zkteco');
    process.exitCode = 2;
}
