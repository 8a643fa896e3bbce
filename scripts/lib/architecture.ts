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
 *   app                      src/app.ts, src/main.ts, src/services.ts, src/cli/*.ts (command-line entry points)
 *
 * Rules (the `rule` of a violation): layering/* (contract, platform, app, rules), module-boundary and
 * surface (what of a module others may import), composition-root (who may import src/services.ts),
 * fastify, sql, tables (SQL on another module's tables; see table-owners.ts), layout/* (a module's
 * files: index.ts, routes, jobs, folders), unresolved-import, cycle.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import ts from 'typescript';
import { TABLES, type TableDeclaration } from './table-owners.js';

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
  /** Edges left out of cycle detection: imports into the composition root (reported by their own rule). */
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
        node.isTypeOnly ||
        (!!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly));
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
/** Command-line entry points (`npm run backup`, `npm run reseal-secrets`): they start from the composition root as main.ts does. */
const isCliEntry = (path: string) => /^src\/cli\/[^/]+\.ts$/.test(path);

/** The graph node a repository-relative path belongs to, or undefined outside `src/`. */
export function nodeOf(path: string): string | undefined {
  if (APP_FILES.has(path) || isCliEntry(path)) return 'app';
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
/** A module's route file: `routes.ts` or `*-routes.ts` (e.g. calendar-sync's `feed-routes.ts`). */
const isRoutes = (path: string) => moduleOf(path) !== undefined && /^(.*-)?routes\.ts$/.test(baseName(path));
const isRepository = (path: string) => baseName(path).endsWith('-repository.ts');
/** A module's front door, `src/modules/<m>/index.ts`. */
const isModuleIndex = (path: string) => /^src\/modules\/[^/]+\/index\.ts$/.test(path);
/** What others may import of a module: its index.ts and anything under its rules/. */
const isModuleSurface = (path: string) => isModuleIndex(path) || /^src\/modules\/[^/]+\/rules\//.test(path);
const COMPOSITION_ROOT = 'src/services.ts';
const MAY_IMPORT_ROOT = new Set(['src/app.ts', 'src/main.ts']);

/** An import into the `app` node from outside it: left out of cycles, reported as composition-root or layering. */
function isIntoApp(file: string, ref: ImportRef): boolean {
  return !!ref.target && nodeOf(ref.target) === 'app' && nodeOf(file) !== 'app';
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
      const bucket = isIntoApp(f.path, ref) ? exempt : undefined;
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
    lines.push(`# not counted for cycles: imports into the composition root (${from.join(', ')} -> app)`);
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
  return MAY_IMPORT_ROOT.has(path) || isRoutes(path) || isModuleIndex(path) || path.startsWith('src/platform/http/');
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

    // The composition root is imported by app.ts and main.ts only (type-only imports and routes included).
    const intoRoot = ref.target === COMPOSITION_ROOT;
    if (intoRoot && !MAY_IMPORT_ROOT.has(file.path) && !isCliEntry(file.path)) {
      report(
        'composition-root',
        `${describe(ref)}: only src/app.ts, src/main.ts and src/cli/*.ts import src/services.ts (take what you need as deps)`,
      );
    }

    // platform: never modules or the composition root.
    if (layer === 'platform' && to && (layerOf(to) === 'modules' || to === 'app') && !intoRoot) {
      report('layering/platform', `${describe(ref)}: platform must not import ${to}`);
    }

    // modules: never src/app.ts or src/main.ts.
    if (layer === 'modules' && to === 'app' && !intoRoot) {
      report('layering/app', `${describe(ref)}: modules must not import ${ref.target}`);
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

    // A module is reached from outside through its index.ts or its rules/, never its repositories, routes or other files.
    const otherModule = ref.target ? moduleOf(ref.target) : undefined;
    if (otherModule && otherModule !== ownModule && layer !== 'platform' && layer !== 'contract') {
      const who = ownModule ? `modules/${ownModule}` : file.path;
      if (ownModule && isRepository(ref.target!)) {
        report('module-boundary', `${describe(ref)}: ${who} must not use modules/${otherModule}'s repository (use its service)`);
      } else if (ownModule && isRoutes(ref.target!)) {
        report('module-boundary', `${describe(ref)}: ${who} must not import modules/${otherModule}'s routes`);
      } else if (!isModuleSurface(ref.target!)) {
        report('surface', `${describe(ref)}: ${who} may import from modules/${otherModule} only its index.ts or rules/`);
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
    if (!ts.isImportDeclaration(stmt) || !ts.isStringLiteral(stmt.moduleSpecifier) || packageOf(stmt.moduleSpecifier.text) !== 'kysely')
      continue;
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

// ---------------------------------------------------------------------------
// Tables: a module's SQL touches its own tables, plus declared reads and writes
// ---------------------------------------------------------------------------

const READ_BUILDERS = new Set(['selectFrom', 'innerJoin', 'leftJoin', 'rightJoin', 'fullJoin', 'crossJoin', 'from', 'using']);
const WRITE_BUILDERS = new Set(['insertInto', 'replaceInto', 'updateTable', 'deleteFrom', 'mergeInto']);
/** Table names after SQL keywords in a `sql` template's text: `delete from`, `insert into`, `update`, `from`, `join`, `into`. */
const SQL_TABLE_WORDS = /\b(delete\s+from|insert\s+(?:or\s+\w+\s+)?into|update|from|join|into)\s+"?([A-Za-z_][A-Za-z0-9_]*)"?/gi;

interface TableUse {
  table: string;
  write: boolean;
  line: number;
  how: string;
}

/** The table of a builder argument: `'rooms'`, `'rooms as r'`, or each of an array of those; non-literals are skipped. */
function literalTables(arg: ts.Expression | undefined): string[] {
  if (!arg) return [];
  if (ts.isArrayLiteralExpression(arg)) return arg.elements.flatMap((e) => literalTables(e));
  if (!ts.isStringLiteralLike(arg)) return [];
  return [arg.text.trim().split(/\s+/)[0]!];
}

/** Tables a file's SQL names: string literals passed to Kysely's builders, and table names in `sql` templates' text. */
export function tableUses(file: SourceFile, sf: ts.SourceFile = parse(file)): TableUse[] {
  const uses: TableUse[] = [];
  const at = (node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const templateText = (t: ts.TemplateLiteral) =>
    ts.isNoSubstitutionTemplateLiteral(t) ? t.text : [t.head.text, ...t.templateSpans.map((s) => s.literal.text)].join(' ? ');
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const name = node.expression.name.text;
      const write = WRITE_BUILDERS.has(name);
      if (write || READ_BUILDERS.has(name)) {
        for (const table of literalTables(node.arguments[0]))
          uses.push({ table, write, line: at(node.expression.name), how: `.${name}('${table}')` });
      }
    }
    if (ts.isTaggedTemplateExpression(node) && /^(\w+\.)?sql(<.*>)?$/s.test(node.tag.getText(sf))) {
      for (const m of templateText(node.template).matchAll(SQL_TABLE_WORDS)) {
        const keyword = m[1]!.toLowerCase();
        const write = keyword !== 'from' && keyword !== 'join';
        uses.push({ table: m[2]!, write, line: at(node), how: `sql\`… ${keyword.replace(/\s+/g, ' ')} ${m[2]} …\`` });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return uses;
}

/** SQL in module m on a table m does not own, unless declared (reads: select/join; writes: anything). */
function tableRule(file: SourceFile, parsed: Parsed, tables: TableDeclaration): Violation[] {
  const m = moduleOf(file.path);
  if (!m) return [];
  const out: Violation[] = [];
  const reads = new Set(tables.reads[m] ?? []);
  const writes = new Set((tables.writes[m] ?? []).map((w) => w.table));
  for (const use of tableUses(file, parsed.sf)) {
    const owner = tables.owners[use.table];
    if (owner === undefined || owner === m) continue; // not a table (a CTE, an alias, a column), or m's own
    if (writes.has(use.table) || (!use.write && reads.has(use.table))) continue;
    const what = use.write ? 'writes' : 'reads';
    out.push({
      file: file.path,
      rule: 'tables',
      detail: `line ${use.line}: ${use.how} ${what} ${use.table}, owned by ${owner}, not declared for ${m} in scripts/lib/table-owners.ts`,
    });
  }
  return out;
}

// ---------------------------------------------------------------------------
// Layout: index.ts per module, routes in route files, job handlers in jobs.ts, rules/ the only sub-folder
// ---------------------------------------------------------------------------

const HTTP_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'all']);

/** `x.get('/path', …)` (any HTTP verb, a path literal first) or `x.route({ method, url, … })`: registering a route. */
function isRouteRegistration(node: ts.CallExpression): boolean {
  if (!ts.isPropertyAccessExpression(node.expression)) return false;
  const name = node.expression.name.text;
  const [first] = node.arguments;
  if (HTTP_METHODS.has(name) && node.arguments.length >= 2 && first) {
    const text = ts.isStringLiteralLike(first) ? first.text : ts.isTemplateExpression(first) ? first.head.text : undefined;
    return text !== undefined && text.startsWith('/');
  }
  if (name === 'route' && first && ts.isObjectLiteralExpression(first)) {
    const keys = new Set(first.properties.map((p) => (p.name && ts.isIdentifier(p.name) ? p.name.text : '')));
    return keys.has('url') && keys.has('method');
  }
  return false;
}

const isJobHandlerType = (t: ts.TypeNode | undefined): boolean =>
  !!t && ts.isTypeReferenceNode(t) && (ts.isIdentifier(t.typeName) ? t.typeName.text : t.typeName.right.text) === 'JobHandler';

/**
 * Building a job handler (what `JobRunner.register` takes): a function or method with a body declared to
 * return `JobHandler<…>`, a variable of type `JobHandler<…>` with a value, `… satisfies/as JobHandler<…>`,
 * or a value import of platform/jobs' handler builders (periodicJob, timedJob: any value but the runner).
 * Naming the type alone (an interface field, a parameter) builds nothing and is fine anywhere.
 */
function jobHandlerSites(parsed: Parsed): { line: number; what: string }[] {
  const { sf } = parsed;
  const out: { line: number; what: string }[] = [];
  const at = (node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  for (const ref of parsed.imports) {
    if (ref.target?.startsWith('src/platform/jobs/') && !ref.typeOnly && ref.target !== 'src/platform/jobs/runner.ts') {
      out.push({ line: ref.line, what: `imports a handler builder (${ref.names.join(', ')})` });
    }
  }
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body && isJobHandlerType(node.type)) {
      out.push({ line: at(node), what: 'a function returning JobHandler' });
    } else if (ts.isVariableDeclaration(node) && node.initializer && isJobHandlerType(node.type)) {
      out.push({ line: at(node), what: 'a JobHandler variable' });
    } else if ((ts.isSatisfiesExpression(node) || ts.isAsExpression(node)) && isJobHandlerType(node.type)) {
      out.push({ line: at(node), what: 'a value typed as JobHandler' });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** What pure rules must not touch (their imports are checked by layering/rules): the clock, randomness, the process, timers, the network. */
function impurity(node: ts.Node, sf: ts.SourceFile): string | undefined {
  if (ts.isCallExpression(node)) {
    const callee = node.expression.getText(sf);
    if (
      ['Date.now', 'Math.random', 'performance.now', 'fetch', 'setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask'].includes(
        callee,
      )
    )
      return `${callee}()`;
  }
  if (ts.isNewExpression(node) && node.expression.getText(sf) === 'Date' && (node.arguments?.length ?? 0) === 0) return 'new Date()';
  if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'process')
    return `process.${node.name.text}`;
  return undefined;
}

/** Per file: routes registered only in route files or index.ts; job handlers built only in jobs.ts; rules/ free of clock, randomness and I/O. */
function layoutRules(file: SourceFile, parsed: Parsed): Violation[] {
  if (!moduleOf(file.path)) return [];
  const out: Violation[] = [];
  const { sf } = parsed;
  if (nodeOf(file.path)!.endsWith('/rules')) {
    const visit = (node: ts.Node) => {
      const what = impurity(node, sf);
      if (what) {
        const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        out.push({
          file: file.path,
          rule: 'layout/rules',
          detail: `line ${line}: ${what} in a pure rule (take the time or value as an argument)`,
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  if (!isRoutes(file.path) && !isModuleIndex(file.path)) {
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node) && isRouteRegistration(node)) {
        const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        const name = (node.expression as ts.PropertyAccessExpression).name.text;
        out.push({
          file: file.path,
          rule: 'layout/routes',
          detail: `line ${line}: .${name}( registers a route outside routes.ts, *-routes.ts or index.ts`,
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  if (baseName(file.path) !== 'jobs.ts') {
    for (const site of jobHandlerSites(parsed)) {
      out.push({
        file: file.path,
        rule: 'layout/jobs',
        detail: `line ${site.line}: ${site.what}: job handlers live in the module's jobs.ts`,
      });
    }
  }
  return out;
}

/** Sub-folders a module may hold besides rules/: the payment provider adapters (payments/providers/). */
const EXTRA_MODULE_FOLDERS = new Set([
  'src/modules/payments/providers/',
  'src/modules/calendar-sync/connectors/',
  'src/modules/devices/vendors/',
]);

/** Per module folder: an index.ts, and no sub-folder but rules/ (and EXTRA_MODULE_FOLDERS). */
function moduleFolderRules(files: SourceFile[]): Violation[] {
  const out: Violation[] = [];
  const modules = new Map<string, Set<string>>();
  const folders = new Set<string>();
  for (const { path } of files) {
    const parts = path.split('/');
    if (parts[0] !== 'src' || parts[1] !== 'modules' || parts.length < 4) continue;
    if (!modules.has(parts[2]!)) modules.set(parts[2]!, new Set());
    modules.get(parts[2]!)!.add(parts.slice(3).join('/'));
    const folder = parts.slice(0, 4).join('/') + '/';
    if (parts.length >= 5 && parts[3] !== 'rules' && !EXTRA_MODULE_FOLDERS.has(folder)) folders.add(folder);
  }
  for (const [m, inside] of [...modules].sort(([a], [b]) => a.localeCompare(b))) {
    if (!inside.has('index.ts'))
      out.push({ file: `src/modules/${m}/index.ts`, rule: 'layout/index', detail: `modules/${m} has no index.ts (its front door)` });
  }
  for (const folder of [...folders].sort()) {
    out.push({ file: folder, rule: 'layout/folders', detail: `a module holds only files and a rules/ folder` });
  }
  return out;
}

// ---------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------

export interface ArchitectureReport {
  graph: ModuleGraph;
  cycles: string[][];
  violations: Violation[];
}

export interface CheckOptions {
  /** Table ownership to check SQL against; default the declaration in table-owners.ts. */
  tables?: TableDeclaration;
}

export function checkArchitecture(files: SourceFile[], options: CheckOptions = {}): ArchitectureReport {
  const parsed = parseAll(files);
  const known = new Set(files.map((f) => f.path));
  const tables = options.tables ?? TABLES;
  const violations: Violation[] = [...moduleFolderRules(files)];
  for (const f of files) {
    const p = parsed.get(f.path)!;
    violations.push(...importRules(f, p.imports, known), ...sqlRule(f, p), ...tableRule(f, p, tables), ...layoutRules(f, p));
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

/** Rules about edges of the graph that must not exist: a module's internals from outside, anything into the composition root. */
const CROSSING_RULES = new Set(['surface', 'module-boundary', 'composition-root']);

/** The violations `npm run graph` shows under the graph (and fails on), as `file: rule: detail` lines. */
export function graphCrossings(report: ArchitectureReport): string[] {
  return report.violations.filter((v) => CROSSING_RULES.has(v.rule)).map(formatViolation);
}
