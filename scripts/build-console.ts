/**
 * Builds the operator console (src/console-ui, Preact + TypeScript) into
 * dist/console: index.html plus assets/console.js and assets/console.css, minified.
 * Run by `npm run build` (and so at install through `prepare`), and by the browser
 * test before it starts. Prints the sizes; fails when the JavaScript a first load
 * fetches exceeds the budget (150 KB minified).
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
export const CONSOLE_SRC = `${root}src/console-ui/`;
export const CONSOLE_OUT = `${root}dist/console/`;
export const JS_BUDGET_BYTES = 150 * 1024;

export interface ConsoleBuild {
  jsBytes: number;
  jsGzipBytes: number;
  cssBytes: number;
}

export async function buildConsole(outDir = CONSOLE_OUT): Promise<ConsoleBuild> {
  mkdirSync(`${outDir}assets`, { recursive: true });
  await build({
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
  });
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
