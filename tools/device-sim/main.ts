/**
 * Device stand-ins for a person to try the vendor transports: `npm run device:sim -- --kind isapi` starts a
 * HikVision ISAPI terminal on loopback and prints what to put in the site document.
 */
import { IsapiTerminal } from './isapi-terminal.js';

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

switch (arg('kind')) {
  case 'isapi':
    await isapi();
    break;
  case 'zkteco':
    console.log('not yet');
    break;
  default:
    console.error('usage: npm run device:sim -- --kind isapi|zkteco');
    process.exitCode = 2;
}
