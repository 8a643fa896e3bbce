/**
 * The SDK as a package: built (npm run build:sdk), packed (npm pack), installed from
 * its tarball into an empty project outside the repository (npm install --offline),
 * and the sdk/README.md quick start run there against a service holding the demo
 * site: as ESM (.mjs), as CommonJS (require) and as strict TypeScript (tsc, then node).
 * The project sees only the tarball, never the service's source tree.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectQuickStartBooks, quickStartCode } from '../support/quick-start.js';
import { startTestService, type TestService } from '../support/test-service.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** The environment of a plain Node 20 user: no npm_* settings of the npm run that started vitest, no loaders. */
function plainEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (
      !/^npm_/i.test(k) &&
      !['NODE_OPTIONS', 'APP_ID', 'PROJECT_ID', 'MEMBER', 'VITEST', 'VITEST_POOL_ID', 'VITEST_WORKER_ID', 'TEST'].includes(k)
    )
      env[k] = v;
  return { ...env, ...extra };
}

/** The quick start's statements inside an async function (CommonJS has no top-level await). */
function inMain(code: string): string {
  const lines = code.split('\n');
  const imports = lines.filter((l) => l.startsWith('import '));
  const body = lines.filter((l) => !l.startsWith('import '));
  return [
    ...imports,
    'async function main(): Promise<void> {',
    ...body,
    '}',
    'main().catch((err) => { console.error(err); process.exitCode = 1; });',
  ].join('\n');
}

function toJs(code: string, module: ts.ModuleKind): string {
  return ts.transpileModule(code, { compilerOptions: { target: ts.ScriptTarget.ES2022, module } }).outputText;
}

/**
 * Registry tarballs of the repo's locked typescript and @types/node (and their dependencies): npm's cache holds
 * them since the repo installed them. By address, since the cache may hold only the abbreviated metadata that
 * `npm install <name>@<version>` does not accept offline.
 */
function lockedTarballs(names: string[]): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')).packages as Record<
    string,
    { version: string; dependencies?: Record<string, string> }
  >;
  const urls = new Set<string>();
  const visit = (name: string, under: string): void => {
    const key = [`${under}/node_modules/${name}`, `node_modules/${name}`].find((k) => lock[k]);
    if (!key) return;
    const url = `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${lock[key].version}.tgz`;
    if (urls.has(url)) return;
    urls.add(url);
    for (const dep of Object.keys(lock[key].dependencies ?? {})) visit(dep, key);
  };
  for (const name of names) visit(name, '');
  return [...urls];
}

async function installInto(project: string, tarball: string): Promise<string> {
  const npm = (args: string[]) =>
    run('npm', [...args, '--offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: project, env: plainEnv() });
  try {
    await npm(['install', tarball, ...lockedTarballs(['typescript', '@types/node'])]);
    return 'from npm cache';
  } catch {
    // Not in npm's cache: the SDK still comes from its tarball; the compiler and Node's types are the repo's copies.
    await npm(['install', tarball]);
    for (const name of ['typescript', '@types/node', 'undici-types']) {
      const to = join(project, 'node_modules', name);
      mkdirSync(join(to, '..'), { recursive: true });
      if (!existsSync(to)) symlinkSync(join(ROOT, 'node_modules', name), to);
    }
    return 'linked from the repo';
  }
}

/** Runs one form of the quick start in the project with plain node; it books a room the service then holds. */
async function runQuickStart(svc: TestService, appSecret: string, project: string, file: string): Promise<void> {
  await expectQuickStartBooks(svc, [file], project, plainEnv({ BOOKING_URL: svc.url, APP_SECRET: appSecret }));
}

/** Strict tsc over the quick start as an ES module and as CommonJS, the package's declarations checked too. */
async function typeCheck(project: string): Promise<void> {
  writeFileSync(join(project, 'quick-start.mts'), quickStartCode());
  writeFileSync(join(project, 'quick-start-require.cts'), inMain(quickStartCode()));
  const compilerOptions = {
    strict: true,
    target: 'ES2022',
    lib: ['ES2022'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    types: ['node'],
    skipLibCheck: false, // the package's index.d.ts is checked too
    noEmitOnError: true,
    outDir: 'out',
  };
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['quick-start.mts', 'quick-start-require.cts'] }));
  const tsc = join(project, 'node_modules/typescript/bin/tsc');
  await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project, env: plainEnv() }).catch(
    (err: { stdout?: string; message: string }) => {
      throw new Error(`tsc failed:\n${err.stdout ?? err.message}`);
    },
  );
}

describe('the SDK package, installed from its tarball into an empty project', () => {
  let svc: TestService;
  let appSecret: string;
  let dir: string;
  let project: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sdk-package-'));
    expect(dir.startsWith(ROOT)).toBe(false);
    const built = run('npm', ['run', '-s', 'build:sdk'], { cwd: ROOT, env: plainEnv() }); // while the service starts
    built.catch(() => undefined); // awaited below
    svc = await startTestService({ noWorkers: true });
    const demo = JSON.parse(readFileSync(join(ROOT, 'src/modules/sandbox/demo-site.json'), 'utf8'));
    const applied = await svc.ops('POST', '/ops/v1/apply', demo);
    expect(applied.status, applied.text).toBe(200);
    appSecret = demo.apps[0].appSecret;
    await built;

    await run('npm', ['pack', '--pack-destination', dir, '--loglevel=error'], { cwd: join(ROOT, 'sdk'), env: plainEnv() });
    const [tarball] = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
    expect(tarball).toBe('booking-sdk-0.1.0.tgz');
    project = join(dir, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'sdk-consumer', version: '1.0.0', private: true }));
    const how = await installInto(project, join(dir, tarball));
    if (how !== 'from npm cache') console.warn(`sdk-package test: typescript and @types/node ${how}`);
  }, 300_000);

  afterAll(async () => {
    await svc?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds the bundles and one self-contained declaration file', () => {
    const pkg = join(project, 'node_modules/@booking/sdk');
    expect(readdirSync(join(pkg, 'dist')).sort()).toEqual(['index.cjs', 'index.d.cts', 'index.d.ts', 'index.js']);
    expect(existsSync(join(pkg, 'src'))).toBe(false);
    const dts = readFileSync(join(pkg, 'dist/index.d.ts'), 'utf8');
    const imported = [...dts.matchAll(/(?:from|import\()\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
    expect(imported.filter((s) => !s.startsWith('node:'))).toEqual([]);
    expect(dts).not.toMatch(/typebox|Static</);
    expect(dts).toMatch(/export type Meeting = \{/);
  });

  it('runs the quick start as ESM (import)', async () => {
    const file = join(project, 'quick-start.mjs');
    writeFileSync(file, toJs(quickStartCode(), ts.ModuleKind.ESNext));
    await runQuickStart(svc, appSecret, project, file);
  }, 120_000);

  it('runs the quick start as CommonJS (require)', async () => {
    const file = join(project, 'quick-start.cjs');
    const js = toJs(inMain(quickStartCode()), ts.ModuleKind.CommonJS);
    expect(js).toContain('require("@booking/sdk")');
    writeFileSync(file, js);
    await runQuickStart(svc, appSecret, project, file);
  }, 120_000);

  it('type-checks the quick start with strict tsc (ESM and require) and runs it', async () => {
    await typeCheck(project);
    await runQuickStart(svc, appSecret, project, join(project, 'out/quick-start.mjs'));
  }, 120_000);
});
