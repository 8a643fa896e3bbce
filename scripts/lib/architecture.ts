/**
 * Architecture checks over the source tree, as pure functions of `{ path, content }[]`
 * (paths relative to the repository root, with `/`), so the CLI scripts and the
 * unit test share them and tests can feed synthetic files.
 *
 * Nodes (the folder-level graph):
 *   contract                 src/contract/**
 *   platform/<sub>           src/platform/<sub>/** or src/platform/<sub>.ts (db, http, clock, errors, ids, …)
 *   modules/<m>/rules        src/modules/<m>/rules/**
 *   modules/<m>              the rest of src/modules/<m>/**
 *   app                      src/app.ts, src/main.ts, src/services.ts
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import ts from 'typescript';

export interface SourceFile {
  /** Relative to the repository root, `/`-separated, e.g. `src/modules/site/routes.ts`. */
  path: string;
  content: string;
}

export interface ImportRef {
  specifier: string;
  /** `import type …`, `export type … from`, every named binding `type`, or an `import('…')` type. */
  typeOnly: boolean;
  /** Named bindings imported (original export names); `default`/`*` for those forms. */
  names: string[];
  line: number;
  /** Repository-relative path for a relative specifier (whether or not it exists). */
  target?: string;
  /** npm package (`kysely`, `@fastify/swagger`) or `node:` builtin for a bare specifier. */
  pkg?: string;
}

export interface Violation {
  file: string;
  rule: string;
  detail: string;
}

export interface Edge {
  from: string;
  to: string;
  /** Files whose imports make up this edge, with the imported path. */
  via: { file: string; target: string }[];
}

export interface ModuleGraph {
  nodes: string[];
  /** Edges between distinct nodes, counted for cycles. */
  edges: Map<string, Map<string, Edge>>;
  /** Edges left out of cycle detection: the sanctioned type-only `Services` imports of route files. */
  exempt: Edge[];
}

// ---------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------

/** Every `.ts` file under `<root>/src`, as repository-relative paths. */
export function loadSourceFiles(root: string, dir = 'src'): SourceFile[] {
  const out: SourceFile[] = [];
  const walk = (abs: string) => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      const full = join(abs, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && entry.name.endsWith('.ts')) {
        out.push({ path: relative(root, full).split(sep).join('/'), content: readFileSync(full, 'utf8') });
      }
    }
  };
  walk(join(root, dir));
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

function parse(file: SourceFile): ts.SourceFile {
  return ts.createSourceFile(file.path, file.content, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

function packageOf(specifier: string): string {
  if (specifier.startsWith('node:')) return specifier;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

function resolveTarget(from: string, specifier: string): string {
  const joined = posix.normalize(posix.join(posix.dirname(from), specifier));
  return joined.replace(/\.(m|c)?js$/, '.ts');
}

/** Every import, re-export, `import()` call and `import('…')` type of a file. */
export function importsOf(file: SourceFile, sf: ts.SourceFile = parse(file)): ImportRef[] {
  const refs: ImportRef[] = [];
  const add = (spec: ts.Expression | undefined, node: ts.Node, typeOnly: boolean, names: string[]) => {
    if (!spec || !ts.isStringLiteralLike(spec)) return;
    const specifier = spec.text;
    const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
    const ref: ImportRef = { specifier, typeOnly, names, line };
    if (specifier.startsWith('.')) ref.target = resolveTarget(file.path, specifier);
    else ref.pkg = packageOf(specifier);
    refs.push(ref);
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const names: string[] = [];
      let typeOnly = clause?.isTypeOnly ?? false;
      if (clause && !typeOnly) {
        const bindings = clause.namedBindings;
        const named = bindings && ts.isNamedImports(bindings) ? bindings.elements : undefined;
        // `import { type A, type B } from` is erased too; a bare `import 'x'` is not.
        typeOnly = !clause.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly);
      }
      if (clause?.name) names.push('default');
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) names.push('*');
      if (bindings && ts.isNamedImports(bindings)) {
        for (const e of bindings.elements) names.push((e.propertyName ?? e.name).text);
      }
      add(node.moduleSpecifier, node, typeOnly, names);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const clause = node.exportClause;
      const names = clause && ts.isNamedExports(clause) ? clause.elements.map((e) => (e.propertyName ?? e.name).text) : ['*'];
      const typeOnly =
        node.isTypeOnly || (!!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly));
      add(node.moduleSpecifier, node, typeOnly, names);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node, node.isTypeOnly, ['=']);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], node, false, ['*']);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal as ts.Expression, node, true, ['*']);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return refs;
}

// ---------------------------------------------------------------------------
// Nodes
// ---------------------------------------------------------------------------

const APP_FILES = new Set(['src/app.ts', 'src/main.ts', 'src/services.ts']);

/** The graph node a repository-relative path belongs to, or undefined outside `src/`. */
export function nodeOf(path: string): string | undefined {
  if (APP_FILES.has(path)) return 'app';
  const parts = path.split('/');
  if (parts[0] !== 'src' || parts.length < 2) return undefined;
  if (parts[1] === 'contract') return 'contract';
  if (parts[1] === 'platform' && parts.length >= 3) {
    return `platform/${parts[2]!.replace(/\.(ts|json)$/, '')}`;
  }
  if (parts[1] === 'modules' && parts.length >= 4) {
    return parts[3] === 'rules' && parts.length >= 5 ? `modules/${parts[2]}/rules` : `modules/${parts[2]}`;
  }
  return `src/${parts.slice(1).join('/')}`;
}

const layerOf = (node: string) => node.split('/')[0]!;
const moduleOf = (path: string) => (path.startsWith('src/modules/') ? path.split('/')[2] : undefined);
const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);
const isRoutes = (path: string) => baseName(path) === 'routes.ts';
const isRepository = (path: string) => baseName(path).endsWith('-repository.ts');

/** The one sanctioned upward import: `import type { Services } from '…/services.js'` in a route file. */
function isExemptServicesImport(file: string, ref: ImportRef): boolean {
  return ref.target === 'src/services.ts' && ref.typeOnly && isRoutes(file) && moduleOf(file) !== undefined;
}

// ---------------------------------------------------------------------------
// Graph and cycles
// ---------------------------------------------------------------------------

export function buildGraph(files: SourceFile[], parsed = parseAll(files)): ModuleGraph {
  const nodes = new Set<string>();
  const edges = new Map<string, Map<string, Edge>>();
  const exempt = new Map<string, Edge>();
  for (const f of files) {
    const from = nodeOf(f.path);
    if (!from) continue;
    nodes.add(from);
    if (!edges.has(from)) edges.set(from, new Map());
    for (const ref of parsed.get(f.path)!.imports) {
      if (!ref.target) continue;
      const to = nodeOf(ref.target);
      if (!to || to === from) continue;
      nodes.add(to);
      const key = `${from}\0${to}`;
      const bucket = isExemptServicesImport(f.path, ref) ? exempt : undefined;
      let edge = bucket ? bucket.get(key) : edges.get(from)!.get(to);
      if (!edge) {
        edge = { from, to, via: [] };
        if (bucket) bucket.set(key, edge);
        else edges.get(from)!.set(to, edge);
      }
      edge.via.push({ file: f.path, target: ref.target });
    }
  }
  for (const n of nodes) if (!edges.has(n)) edges.set(n, new Map());
  return { nodes: [...nodes].sort(), edges, exempt: [...exempt.values()] };
}

/** One cycle (as a node path ending where it starts) per strongly connected component with more than one node. */
export function findCycles(graph: ModuleGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  const strongConnect = (v: string) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of [...graph.edges.get(v)!.keys()].sort()) {
      if (!index.has(w)) {
        strongConnect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const n of graph.nodes) if (!index.has(n)) strongConnect(n);

  // Shortest cycle through the component's first node (BFS inside the component).
  return components
    .map((component) => {
      const inside = new Set(component);
      const start = component[0]!;
      const previous = new Map<string, string>();
      const queue = [start];
      while (queue.length > 0) {
        const v = queue.shift()!;
        for (const w of [...graph.edges.get(v)!.keys()].sort()) {
          if (!inside.has(w)) continue;
          if (w === start) {
            const path = [v];
            while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
            return [...path, start];
          }
          if (!previous.has(w)) {
            previous.set(w, v);
            queue.push(w);
          }
        }
      }
      return [...component, start];
    })
    .map(startAtUpwardEdge)
    .sort((a, b) => a.join().localeCompare(b.join()));
}

const RANK: Record<string, number> = { contract: 0, platform: 1, rules: 2, modules: 3, app: 4 };
const rankOf = (node: string) => (node.endsWith('/rules') ? RANK.rules! : (RANK[layerOf(node)] ?? 3));

/** Rotates a cycle so it starts with its most upward edge (e.g. platform -> modules), the likely culprit. */
function startAtUpwardEdge(cycle: string[]): string[] {
  const ring = cycle.slice(0, -1);
  let best = 0;
  for (let i = 1; i < ring.length; i++) {
    const rise = (j: number) => rankOf(ring[(j + 1) % ring.length]!) - rankOf(ring[j]!);
    if (rise(i) > rise(best)) best = i;
  }
  const rotated = [...ring.slice(best), ...ring.slice(0, best)];
  return [...rotated, rotated[0]!];
}

export function formatGraph(graph: ModuleGraph): string[] {
  const lines = graph.nodes.map((n) => {
    const deps = [...graph.edges.get(n)!.keys()].sort();
    return `${n} -> ${deps.join(', ')}`.trimEnd();
  });
  if (graph.exempt.length > 0) {
    const from = [...new Set(graph.exempt.map((e) => e.from))].sort();
    lines.push(`# not counted: type-only Services imports of routes.ts files (${from.join(', ')} -> app)`);
  }
  return lines;
}

export function formatCycle(graph: ModuleGraph, cycle: string[]): string {
  const steps = cycle.slice(0, -1).map((from, i) => {
    const edge = graph.edges.get(from)!.get(cycle[i + 1]!)!;
    const first = edge.via[0]!;
    return `${from} -> ${edge.to} (${first.file} imports ${first.target}${edge.via.length > 1 ? `, +${edge.via.length - 1} more` : ''})`;
  });
  return `${cycle.join(' -> ')}; ${steps.join('; ')}`;
}

// ---------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------

interface Parsed {
  sf: ts.SourceFile;
  imports: ImportRef[];
}

function parseAll(files: SourceFile[]): Map<string, Parsed> {
  const out = new Map<string, Parsed>();
  for (const f of files) {
    const sf = parse(f);
    out.set(f.path, { sf, imports: importsOf(f, sf) });
  }
  return out;
}

const isFastify = (pkg: string) => pkg === 'fastify' || pkg.startsWith('@fastify/');
const PURE_PACKAGES = new Set(['luxon', 'typebox']);
/** What pure rules may import besides rules folders: contract, errors, ids and pure time helpers (platform/time). */
const RULES_MAY_IMPORT = new Set(['contract', 'platform/errors', 'platform/ids', 'platform/time']);
/** kysely's `sql.*` helpers (sql.raw, sql.table, sql.ref, …). */
const SQL_HELPERS = new Set(['raw', 'table', 'ref', 'id', 'lit', 'literal', 'val', 'value', 'join']);
const SQL_BUILDERS = new Set(['selectFrom', 'selectNoFrom', 'insertInto', 'replaceInto', 'updateTable', 'deleteFrom', 'mergeInto']);

function mayHoldSql(path: string): boolean {
  return isRepository(path) || path.startsWith('src/platform/db/');
}

function fastifyAllowed(path: string): boolean {
  return path === 'src/app.ts' || path === 'src/main.ts' || isRoutes(path) || path.startsWith('src/platform/http/');
}

function describe(ref: ImportRef): string {
  return `line ${ref.line}: imports ${ref.typeOnly ? 'type-only ' : ''}'${ref.specifier}'`;
}

function importRules(file: SourceFile, imports: ImportRef[], known: Set<string>): Violation[] {
  const out: Violation[] = [];
  const report = (rule: string, detail: string) => out.push({ file: file.path, rule, detail });
  const from = nodeOf(file.path);
  if (!from) return out;
  const layer = layerOf(from);
  const ownModule = moduleOf(file.path);

  for (const ref of imports) {
    const to = ref.target ? nodeOf(ref.target) : undefined;

    if (ref.target && !known.has(ref.target) && ref.target.startsWith('src/') && ref.target.endsWith('.ts')) {
      report('unresolved-import', `${describe(ref)}: no file ${ref.target}`);
    }

    // contract: typebox and other contract files only.
    if (layer === 'contract') {
      const ok = ref.pkg ? ref.pkg === 'typebox' : to === 'contract';
      if (!ok) report('layering/contract', `${describe(ref)}: contract imports only typebox and contract files`);
    }

    // platform: never modules or the composition root.
    if (layer === 'platform' && to && (layerOf(to) === 'modules' || to === 'app')) {
      report('layering/platform', `${describe(ref)}: platform must not import ${to}`);
    }

    // modules: never the composition root, except route files' `import type { Services }`.
    if (layer === 'modules' && to === 'app' && !isExemptServicesImport(file.path, ref)) {
      const why =
        ref.target === 'src/services.ts' ? 'only routes.ts files may import src/services.ts, and only type-only' : `modules must not import ${ref.target}`;
      report('layering/app', `${describe(ref)}: ${why}`);
    }

    // rules: pure code only.
    if (from.endsWith('/rules')) {
      let ok: boolean;
      if (ref.pkg) ok = PURE_PACKAGES.has(ref.pkg);
      else if (!to) ok = false;
      else if (to === 'platform/clock') ok = ref.typeOnly;
      else ok = RULES_MAY_IMPORT.has(to) || /^modules\/[^/]+\/rules$/.test(to);
      if (!ok) {
        const allowed = 'contract, platform/errors, platform/ids, platform/time, platform/clock (types), rules folders, luxon, typebox';
        report('layering/rules', `${describe(ref)}: pure rules import only ${allowed}`);
      }
    }

    // A module reaches another one through its service or its rules, never its repositories or routes.
    const otherModule = ref.target ? moduleOf(ref.target) : undefined;
    if (ownModule && otherModule && otherModule !== ownModule) {
      if (isRepository(ref.target!)) {
        report('module-boundary', `${describe(ref)}: modules/${ownModule} must not use modules/${otherModule}'s repository (use its service)`);
      } else if (isRoutes(ref.target!)) {
        report('module-boundary', `${describe(ref)}: modules/${ownModule} must not import modules/${otherModule}'s routes`);
      }
    }

    // Fastify stays at the HTTP edge.
    if (ref.pkg && isFastify(ref.pkg) && !fastifyAllowed(file.path)) {
      report('fastify', `${describe(ref)}: fastify only in src/app.ts, src/main.ts, routes.ts files and src/platform/http/`);
    }
  }
  return out;
}

/** SQL outside repositories: query builders, `sql` templates and helpers, or importing kysely's `sql`. */
function sqlRule(file: SourceFile, parsed: Parsed): Violation[] {
  if (mayHoldSql(file.path)) return [];
  const out: Violation[] = [];
  const { sf } = parsed;
  const at = (node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const report = (node: ts.Node, detail: string) =>
    out.push({ file: file.path, rule: 'sql', detail: `line ${at(node)}: ${detail} outside a *-repository.ts or src/platform/db/` });

  const sqlNames = new Set(['sql']);
  for (const stmt of sf.statements) {
    if (!ts.isImportDeclaration(stmt) || !ts.isStringLiteral(stmt.moduleSpecifier) || packageOf(stmt.moduleSpecifier.text) !== 'kysely') continue;
    const bindings = stmt.importClause?.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) sqlNames.add(`${bindings.name.text}.sql`);
    if (!bindings || !ts.isNamedImports(bindings)) continue;
    for (const e of bindings.elements) {
      if ((e.propertyName ?? e.name).text !== 'sql') continue;
      sqlNames.add(e.name.text);
      report(e, `imports sql from kysely`);
    }
  }
  const isSqlTag = (expr: ts.Expression) => sqlNames.has(expr.getText(sf));

  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (ts.isPropertyAccessExpression(callee) && SQL_BUILDERS.has(callee.name.text)) {
        report(callee.name, `.${callee.name.text}(`);
      }
    }
    if (ts.isTaggedTemplateExpression(node) && isSqlTag(node.tag)) report(node, 'sql`…` template');
    if (ts.isPropertyAccessExpression(node) && SQL_HELPERS.has(node.name.text) && isSqlTag(node.expression)) {
      report(node, `sql.${node.name.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

export interface ArchitectureReport {
  graph: ModuleGraph;
  cycles: string[][];
  violations: Violation[];
}

export function checkArchitecture(files: SourceFile[]): ArchitectureReport {
  const parsed = parseAll(files);
  const known = new Set(files.map((f) => f.path));
  const violations: Violation[] = [];
  for (const f of files) {
    const p = parsed.get(f.path)!;
    violations.push(...importRules(f, p.imports, known), ...sqlRule(f, p));
  }
  const graph = buildGraph(files, parsed);
  const cycles = findCycles(graph);
  for (const cycle of cycles) {
    const first = graph.edges.get(cycle[0]!)!.get(cycle[1]!)!.via[0]!;
    violations.push({ file: first.file, rule: 'cycle', detail: formatCycle(graph, cycle) });
  }
  violations.sort((a, b) => a.file.localeCompare(b.file) || a.rule.localeCompare(b.rule) || lineOf(a) - lineOf(b));
  return { graph, cycles, violations };
}

const lineOf = (v: Violation) => Number(/^line (\d+)/.exec(v.detail)?.[1] ?? 0);

export function formatViolation(v: Violation): string {
  return `${v.file}: ${v.rule}: ${v.detail}`;
}
