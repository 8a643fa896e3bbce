/**
 * The ISAPI stand-ins of bench:doors in their own process: ISAPI_TERMINALS (default 11) HikVision terminal
 * stand-ins (tools/device-sim/isapi-terminal.ts) on loopback ports, and a loopback control server the bench
 * reads them through, so that watching the terminals loads neither the service nor the terminals' ISAPI:
 *
 *   GET /counts                       → [{ users, complete }] per terminal (complete: CARDS cards and a face)
 *   GET /user?t=<index>&e=<employeeNo> → that terminal's user (Valid, cards, face) or null
 *
 * Prints one line once listening: `isapi-terminals: {"control": url, "terminals": [{url, username, password}]}`.
 */
import { createServer } from 'node:http';
import { IsapiTerminal } from '../tools/device-sim/isapi-terminal.js';

const COUNT = Number(process.env.ISAPI_TERMINALS || 11);
const CARDS = Number(process.env.ISAPI_CARDS || 2);

const terminals = Array.from({ length: COUNT }, () => new IsapiTerminal({ capacity: 10_000 }));
const urls: string[] = [];
for (const t of terminals) urls.push((await t.start()).url);

const control = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://control');
  let body: unknown = null;
  if (url.pathname === '/counts') {
    body = terminals.map((t) => {
      const users = t.users();
      return { users: users.length, complete: users.filter((u) => u.face && u.cards.length === CARDS).length };
    });
  } else if (url.pathname === '/user') {
    const t = terminals[Number(url.searchParams.get('t'))];
    body = t?.users().find((u) => u.employeeNo === url.searchParams.get('e')) ?? null;
  } else {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
});
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
const controlUrl = `http://127.0.0.1:${(control.address() as { port: number }).port}`;

console.log(
  `isapi-terminals: ${JSON.stringify({
    control: controlUrl,
    terminals: terminals.map((t, i) => ({ url: urls[i], username: t.username, password: t.currentPassword })),
  })}`,
);

async function shutdown(): Promise<void> {
  control.close();
  await Promise.all(terminals.map((t) => t.stop()));
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());
