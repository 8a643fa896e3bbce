/**
 * Builds the SDK into sdk/dist: index.js (ESM), index.cjs (CommonJS) and one
 * bundled index.d.ts (and its copy index.d.cts for require) with no import of the
 * service's source or of TypeBox.
 *
 * The API types in src/types.ts are `Static<>` of the service's TypeBox schemas
 * (src/contract), imported type-only. For the package they are written out as
 * the plain object types the compiler resolves them to (what an editor shows on
 * hover) in a staged copy of the sources, which dts-bundle-generator then bundles
 * into one file. Run: `npm run build` here, or `npm run build:sdk` at the root.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SDK = fileURLToPath(new URL('../', import.meta.url));
const SRC = join(SDK, 'src');
const DIST = join(SDK, 'dist');
const require = createRequire(import.meta.url);

const COMPILER_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2023.d.ts'],
  types: ['node'],
  strict: true,
  skipLibCheck: true,
  noEmit: true,
};

const PRINT_FLAGS =
  ts.NodeBuilderFlags.NoTruncation |
  ts.NodeBuilderFlags.InTypeAlias |
  ts.NodeBuilderFlags.MultilineObjectLiterals |
  ts.NodeBuilderFlags.IgnoreErrors;

/** types.ts with its contract and TypeBox imports replaced by the types they resolve to. */
export function expandedTypesSource(): string {
  const file = join(SRC, 'types.ts');
  const program = ts.createProgram([file], COMPILER_OPTIONS);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const printer = ts.createPrinter({ newLine: ts.NewLineKind.LineFeed });
  const print = (type: ts.Type): string => {
    const node = checker.typeToTypeNode(type, undefined, PRINT_FLAGS);
    if (!node) throw new Error(`cannot write out ${checker.typeToString(type)}`);
    const text = printer.printNode(ts.EmitHint.Unspecified, node, source);
    if (/\bimport\(|typebox/i.test(text)) throw new Error(`not self-contained: ${text.slice(0, 200)}`);
    return text;
  };
  const edits: { start: number; end: number; text: string }[] = [];
  for (const stmt of source.statements) {
    if (ts.isImportDeclaration(stmt)) {
      const bindings = stmt.importClause?.namedBindings;
      const names = bindings && ts.isNamedImports(bindings) ? bindings.elements : [];
      const declared: string[] = [];
      const from = (stmt.moduleSpecifier as ts.StringLiteral).text;
      for (const spec of from === 'typebox' ? [] : names) {
        // Static<> itself goes: every use of it is written out below
        const alias = checker.getAliasedSymbol(checker.getSymbolAtLocation(spec.name)!);
        if (!(alias.flags & (ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Interface))) continue; // a schema, used only in typeof
        declared.push(`type ${spec.name.text} = ${print(checker.getDeclaredTypeOfSymbol(alias))};`);
      }
      edits.push({ start: stmt.getStart(source), end: stmt.getEnd(), text: declared.join('\n') });
    } else if (ts.isTypeAliasDeclaration(stmt) && /\bStatic</.test(stmt.type.getText(source))) {
      edits.push({ start: stmt.type.getStart(source), end: stmt.type.getEnd(), text: print(checker.getTypeAtLocation(stmt.name)) });
    }
  }
  const header = ts.getLeadingCommentRanges(source.text, 0)?.[0];
  if (header)
    edits.push({
      start: header.pos,
      end: header.end,
      text: '/** Request and response types of the API, written out from the schemas the service validates with. */',
    });
  let text = source.text;
  for (const e of edits.sort((a, b) => b.start - a.start)) text = text.slice(0, e.start) + e.text + text.slice(e.end);
  return text;
}

function esbuild(format: 'esm' | 'cjs', outfile: string): void {
  const bin = join(dirname(require.resolve('esbuild/package.json')), 'bin/esbuild');
  execFileSync(bin, [
    join(SRC, 'index.ts'),
    '--bundle',
    '--platform=node',
    '--target=node20',
    `--format=${format}`,
    `--outfile=${outfile}`,
    '--log-level=warning',
  ]);
}

function bundleDeclarations(outfile: string): void {
  const stage = mkdtempSync(join(tmpdir(), 'booking-sdk-'));
  try {
    const src = join(stage, 'src');
    mkdirSync(src);
    for (const f of readdirSync(SRC)) if (f.endsWith('.ts')) copyFileSync(join(SRC, f), join(src, f));
    writeFileSync(join(src, 'types.ts'), expandedTypesSource());
    writeFileSync(
      join(stage, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023'],
          strict: true,
          skipLibCheck: true,
          typeRoots: [join(SDK, '../node_modules/@types')],
          types: ['node'],
        },
        include: ['src'],
      }),
    );
    const bin = require.resolve('dts-bundle-generator/dist/bin/dts-bundle-generator.js');
    // --no-check: test/sdk/sdk-package.test.ts type-checks the bundle as a consumer sees it (skipLibCheck off).
    execFileSync(
      process.execPath,
      [bin, '--silent', '--no-banner', '--no-check', '--project', join(stage, 'tsconfig.json'), '-o', outfile, join(src, 'index.ts')],
      { stdio: 'inherit' },
    );
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

export function buildSdk(): void {
  rmSync(DIST, { recursive: true, force: true });
  mkdirSync(DIST);
  esbuild('esm', join(DIST, 'index.js'));
  esbuild('cjs', join(DIST, 'index.cjs'));
  bundleDeclarations(join(DIST, 'index.d.ts'));
  // The same declarations for require(): TypeScript reads a .d.ts of a "type": "module" package as ESM only.
  copyFileSync(join(DIST, 'index.d.ts'), join(DIST, 'index.d.cts'));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) buildSdk();
