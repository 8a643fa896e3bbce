/**
 * Idle memory of the service as `npm start` runs it: starts the `start` script's
 * command (compiled JavaScript; run `npm run build` first) on a throwaway SQLite
 * database with the demo site, and prints its resident set size (VmRSS) at a few
 * moments after it answers /readyz. Target: ≤ 110 MB once idle.
 *
 *   npm run bench:rss          (BENCH_RSS_SECONDS=5,10,20,30 by default)
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TARGET_MB = 110;
const moments = (process.env.BENCH_RSS_SECONDS || '5,10,20,30').split(',').map(Number);
const root = new URL('..', import.meta.url).pathname;
if (!existsSync(join(root, 'dist/main.js'))) throw new Error('dist/main.js is missing: run npm run build first');

// The start script is `VAR=value … node <flags> dist/main.js`: split it into the environment and the command.
const start: string = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start;
const words = start.split(/\s+/);
const env: Record<string, string> = {};
while (/^[A-Z_]+=/.test(words[0])) {
  const [k, v] = words.shift()!.split('=');
  env[k] = v;
}
const [command, ...args] = words;

const dir = mkdtempSync(join(tmpdir(), 'booking-rss-'));
const port = 3990 + Math.floor(Math.random() * 9);
const child = spawn(command, args, {
  cwd: root,
  env: { ...process.env, ...env, DATABASE_URL: join(dir, 'rss.sqlite'), PORT: String(port), LOG_LEVEL: 'warn' },
  stdio: 'ignore',
});
const rssMb = () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
try {
  const started = performance.now();
  for (;;) {
    if (performance.now() - started > 60_000) throw new Error('the service did not become ready within 60 s');
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await sleep(100);
  }
  const ready = performance.now();
  console.log(`\`${start}\`: ready in ${((ready - started) / 1000).toFixed(1)} s\n`);
  console.log('| seconds after ready | RSS MB | target |');
  console.log('|---:|---:|---|');
  let last = NaN;
  for (const s of moments) {
    await sleep(Math.max(0, ready + s * 1000 - performance.now()));
    last = rssMb();
    console.log(`| ${s} | ${last.toFixed(1)} | ${last <= TARGET_MB ? 'meets' : 'above'} ≤ ${TARGET_MB} |`);
  }
  console.log(`\nidle RSS ${last.toFixed(1)} MB (${(last / TARGET_MB).toFixed(2)} of the ${TARGET_MB} MB target); Node ${process.version}`);
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
