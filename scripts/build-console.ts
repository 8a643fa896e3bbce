/**
 * Builds the operator console (src/console-ui, Preact + TypeScript) into
 * dist/console: index.html plus assets/console.js and assets/console.css, minified.
 * Run by `npm run build` (and so at install through `prepare`), and by the browser
 * test before it starts. Prints the sizes; fails when the JavaScript a first load
 * fetches exceeds the budget (150 KB minified), and when the bundle holds code of
 * TypeBox or of src/contract: the console takes the contract's types with
 * `import type` only (erased at build time), never its schemas.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
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
  jsBytes: number;
  jsGzipBytes: number;
  cssBytes: number;
}

export async function buildConsole(outDir = CONSOLE_OUT): Promise<ConsoleBuild> {
  mkdirSync(`${outDir}assets`, { recursive: true });
  const { metafile } = await build({
    entryPoints: { console: `${CONSOLE_SRC}main.tsx`, 'console-style': `${CONSOLE_SRC}console.css` },
    outdir: `${outDir}assets`,
    bundle: true,
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
  copyFileSync(`${CONSOLE_SRC}index.html`, `${outDir}index.html`);
  const js = readFileSync(`${outDir}assets/console.js`);
  const css = readFileSync(`${outDir}assets/console-style.css`);
  const result = { jsBytes: js.length, jsGzipBytes: gzipSync(js).length, cssBytes: css.length };
  if (result.jsBytes > JS_BUDGET_BYTES) {
    throw new Error(`console bundle is ${result.jsBytes} bytes, over the ${JS_BUDGET_BYTES}-byte budget`);
  }
  return result;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = await buildConsole();
  console.error(
    `console: dist/console/assets/console.js ${(r.jsBytes / 1024).toFixed(1)} KB (${(r.jsGzipBytes / 1024).toFixed(1)} KB gzip), ` +
      `console-style.css ${(r.cssBytes / 1024).toFixed(1)} KB`,
  );
}
