/**
 * Builds the operator console (src/console-ui, Preact + TypeScript) into
 * dist/console: index.html plus assets/console.js and assets/console-style.css,
 * minified. Code split: a screen loaded with `import()` (the analytics screen and
 * its chart library) lands in its own chunk, and code shared by the entry and a
 * lazy chunk in a shared chunk (assets/chunk-<hash>.js; the hash is lower-cased,
 * as the asset route serves only [a-z0-9-] names).
 * Run by `npm run build` (and so at install through `prepare`), and by the browser
 * test before it starts. Prints the sizes; fails when the JavaScript a first load
 * fetches (the entry and the chunks it imports statically) exceeds the budget
 * (150 KB minified), and when the bundle holds code of TypeBox or of src/contract:
 * the console takes the contract's types with `import type` only (erased at build
 * time), never its schemas.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
export const CONSOLE_SRC = `${root}src/console-ui/`;
export const CONSOLE_OUT = `${root}dist/console/`;
export const JS_BUDGET_BYTES = 150 * 1024;
/** Inputs the bundle must not contain: the schemas (and TypeBox under them) stay on the server. */
const SERVER_ONLY = [/(^|\/)node_modules\/typebox\//, /(^|\/)src\/contract\//];

export interface ConsoleBuild {
  /** The JavaScript a first load fetches: console.js and the chunks it imports statically. */
  jsBytes: number;
  jsGzipBytes: number;
  cssBytes: number;
  /** Chunks fetched only when a screen needs them (name → bytes). */
  lazy: Record<string, number>;
}

/** esbuild names chunks with an upper-case hash; the asset route takes lower case only. */
const CHUNK = /chunk-[A-Z0-9]+\.js/g;
const lower = (name: string) => name.replace(CHUNK, (m) => m.toLowerCase());

/** The outputs a first load of `entry` fetches: it and its static imports, transitively. */
function firstLoad(outputs: Record<string, { imports: { path: string; kind: string }[] }>, entry: string): string[] {
  const seen = new Set<string>([entry]);
  const queue = [entry];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    for (const imp of outputs[next]?.imports ?? []) {
      if (imp.kind === 'import-statement' && !seen.has(imp.path)) {
        seen.add(imp.path);
        queue.push(imp.path);
      }
    }
  }
  return [...seen];
}

export async function buildConsole(outDir = CONSOLE_OUT): Promise<ConsoleBuild> {
  mkdirSync(`${outDir}assets`, { recursive: true });
  const { metafile, outputFiles } = await build({
    entryPoints: { console: `${CONSOLE_SRC}main.tsx`, 'console-style': `${CONSOLE_SRC}console.css` },
    outdir: `${outDir}assets`,
    bundle: true,
    splitting: true,
    chunkNames: 'chunk-[hash]',
    write: false,
    minify: true,
    format: 'esm',
    target: ['es2020', 'chrome100', 'safari15', 'firefox100'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: `${CONSOLE_SRC}tsconfig.json`,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'warning',
    metafile: true,
  });
  const leaked = Object.keys(metafile.inputs).filter((input) => SERVER_ONLY.some((re) => re.test(input)));
  if (leaked.length > 0) {
    const named = leaked.filter((input) => SERVER_ONLY[1]!.test(input));
    throw new Error(
      `console bundle holds server-only code, ${leaked.length} files of TypeBox or src/contract (import the contract with \`import type\`): ${[...named, leaked[0]].join(', ')}`,
    );
  }
  const written = new Set<string>();
  for (const file of outputFiles) {
    const name = lower(basename(file.path));
    writeFileSync(`${outDir}assets/${name}`, name.endsWith('.js') ? lower(file.text) : file.contents);
    written.add(name);
  }
  // Chunks of earlier builds go (written files stay: a build running alongside writes the same ones).
  for (const old of readdirSync(`${outDir}assets`)) {
    if (/^chunk-/.test(old) && !written.has(old)) rmSync(`${outDir}assets/${old}`, { force: true });
  }
  copyFileSync(`${CONSOLE_SRC}index.html`, `${outDir}index.html`);
  const outputs = Object.keys(metafile.outputs).filter((o) => o.endsWith('.js'));
  const entry = outputs.find((o) => basename(o) === 'console.js')!;
  const first = firstLoad(metafile.outputs, entry);
  const read = (o: string) => readFileSync(`${outDir}assets/${lower(basename(o))}`);
  const js = Buffer.concat(first.map(read));
  const css = readFileSync(`${outDir}assets/console-style.css`);
  const lazy = Object.fromEntries(outputs.filter((o) => !first.includes(o)).map((o) => [lower(basename(o)), read(o).length]));
  const result = { jsBytes: js.length, jsGzipBytes: gzipSync(js).length, cssBytes: css.length, lazy };
  if (result.jsBytes > JS_BUDGET_BYTES) {
    throw new Error(`console first load is ${result.jsBytes} bytes of JavaScript, over the ${JS_BUDGET_BYTES}-byte budget`);
  }
  return result;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = await buildConsole();
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  const lazy = Object.entries(r.lazy).map(([name, bytes]) => `${name} ${kb(bytes)}`);
  console.error(
    `console: first load (console.js and its shared chunks) ${kb(r.jsBytes)} (${kb(r.jsGzipBytes)} gzip), ` +
      `console-style.css ${kb(r.cssBytes)}; loaded on demand: ${lazy.join(', ') || 'nothing'}`,
  );
}
