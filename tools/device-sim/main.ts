/**
 * Device stand-ins for a person to try: `npm run device:sim -- --kind zkteco --url http://127.0.0.1:3000 --sn ZK0001`.
 * The ZKTeco terminal polls the service and prints what it holds after each change.
 */
import { parseArgs } from 'node:util';
import { ZktecoTerminal } from './zkteco-terminal.js';

const { values } = parseArgs({
  options: {
    kind: { type: 'string', default: 'zkteco' },
    url: { type: 'string', default: 'http://127.0.0.1:3000' },
    sn: { type: 'string', default: 'ZK0001' },
    'poll-ms': { type: 'string', default: '2000' },
    'comm-key': { type: 'string' },
    tz: { type: 'string', default: 'Asia/Bangkok' },
  },
});

switch (values.kind) {
  case 'zkteco': {
    const terminal = new ZktecoTerminal({
      serverUrl: values.url!,
      serialNumber: values.sn!,
      pollMs: Number(values['poll-ms']),
      commKey: values['comm-key'],
      timeZone: values.tz,
    });
    let seen = '';
    terminal.start();
    setInterval(() => {
      const now = JSON.stringify(terminal.users());
      if (now !== seen) console.log(`[zkteco ${values.sn}] users: ${now}`);
      seen = now;
    }, 1000);
    console.log(`[zkteco ${values.sn}] polling ${values.url}/iclock every ${values['poll-ms']} ms`);
    break;
  }
  case 'isapi':
    console.log('not yet');
    process.exit(0);
    break;
  default:
    console.error(`unknown --kind ${values.kind} (isapi | zkteco)`);
    process.exit(2);
}
