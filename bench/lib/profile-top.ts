/**
 * The top self-time functions and packages of a V8 `.cpuprofile` (as written by
 * `node --cpu-prof`), as markdown tables.
 *
 *   npm run bench:profile-top -- /tmp/booking-bench-profile-…/service-sqlite/CPU….cpuprofile [rows]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a function lives: the project's own files, a package, Node itself, or V8's pseudo-frames. */
function placeOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const own = /\/(src|bench|test)\/(.*)$/.exec(url);
  if (own)
    return `${own[1]}/${own[2]
      .split('/')
      .slice(0, own[1] === 'src' ? 3 : 1)
      .join('/')}`;
  return url;
}

const shortUrl = (url: string) => url.replace(/^file:\/\//, '').replace(/^.*?\/(node_modules|src|bench|test)\//, '$1/');

/**
 * Self time per function and per place. With `windows` (monotonic µs, the
 * profile's clock), only the samples taken inside them count.
 */
export function profileTop(
  file: string,
  rows = 20,
  windows?: [number, number][],
): { total: number; functions: [string, number][]; places: [string, number][] } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let t = p.startTime;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    if (windows && !windows.some(([a, b]) => t >= a && t <= b)) return;
    self.set(id, (self.get(id) ?? 0) + dt);
  });
  const fns = new Map<string, number>();
  const places = new Map<string, number>();
  let total = 0;
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    if (functionName === '(idle)') continue;
    // TypeScript run through tsx: the line is the transpiled code's, so only the file is shown.
    const where = url.endsWith('.ts') ? shortUrl(url) : `${shortUrl(url)}:${lineNumber + 1}`;
    const key = url ? `${functionName || '(anonymous)'} — ${where}` : functionName || '(unnamed native code)';
    fns.set(key, (fns.get(key) ?? 0) + us);
    const place = placeOf(url, functionName);
    places.set(place, (places.get(place) ?? 0) + us);
    total += us;
  }
  const top = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, rows);
  return { total, functions: top(fns), places: top(places) };
}

export function printProfileTop(file: string, rows = 20, windows?: [number, number][]): void {
  const { total, functions, places } = profileTop(file, rows, windows);
  const pct = (us: number) => `${((100 * us) / total).toFixed(1)} %`;
  const ms = (us: number) => (us / 1000).toFixed(0);
  const span = windows ? `during the ${windows.length} measured runs` : 'over the whole process life';
  console.log(`\n${ms(total)} ms of CPU sampled ${span} (idle left out); top ${rows} functions by self time:\n`);
  console.log('| self ms | share | function — file:line |');
  console.log('|---:|---:|---|');
  for (const [k, us] of functions) console.log(`| ${ms(us)} | ${pct(us)} | ${k.replace(/\|/g, '\\|')} |`);
  console.log(`\nself time by place (package, Node module, or folder of src):\n`);
  console.log('| self ms | share | place |');
  console.log('|---:|---:|---|');
  for (const [k, us] of places) console.log(`| ${ms(us)} | ${pct(us)} | ${k} |`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, rows] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npm run bench:profile-top -- <file.cpuprofile> [rows]');
    process.exit(2);
  }
  printProfileTop(file, Number(rows || 30));
}
