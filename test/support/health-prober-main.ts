/**
 * Entry point of a /healthz prober in its own process (see health-prober.ts): asks
 * PROBER_URL/healthz one request after another, PROBER_GAP_MS apart, on one
 * keep-alive connection, prints `{"ready":true}` after its first answer and, when
 * its stdin closes, one line `{"latencies":[…]}` (ms per probe, first one left out) and exits.
 */
import http from 'node:http';

const url = process.env.PROBER_URL;
if (!url) throw new Error('PROBER_URL is not set');
const gapMs = Number(process.env.PROBER_GAP_MS ?? 10);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const latencies: number[] = [];
let running = true;

const once = () =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now();
    http
      .get(`${url}/healthz`, { agent }, (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`/healthz answered ${res.statusCode}`)),
        );
      })
      .on('error', reject);
  });

process.stdin.on('end', () => (running = false));
process.stdin.resume();

await once(); // opens the connection: not a measurement
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
while (running) {
  latencies.push(await once());
  await new Promise((r) => setTimeout(r, gapMs));
}
agent.destroy();
process.stdout.write(`${JSON.stringify({ latencies })}\n`, () => process.exit(0));
