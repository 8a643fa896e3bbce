/**
 * Architecture rules of src/ (see scripts/lib/architecture.ts): layering, module
 * surfaces and boundaries, the composition root, fastify at the edge, SQL only in
 * repositories and on the module's own tables, module layout, no cycles between
 * folder nodes. The same checks run as `npm run check:architecture` and `npm run graph`.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  checkArchitecture,
  formatViolation,
  graphCrossings,
  loadSourceFiles,
  nodeOf,
  type SourceFile,
} from '../../scripts/lib/architecture.js';
import { TABLES, type TableDeclaration } from '../../scripts/lib/table-owners.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('src/ architecture', () => {
  const report = checkArchitecture(loadSourceFiles(root));

  it('breaks no rule', () => {
    expect(report.violations.map(formatViolation)).toEqual([]);
  });

  it('has no cycle between folder nodes', () => {
    expect(report.cycles.map((c) => c.join(' -> '))).toEqual([]);
  });
});

/** A synthetic tree with an empty `index.ts` added to each module folder that has none (the layout rule wants one). */
function withIndexes(files: Record<string, string>): SourceFile[] {
  const list: SourceFile[] = Object.entries(files).map(([path, content]) => ({ path, content }));
  const modules = new Set(list.map((f) => /^src\/modules\/[^/]+\//.exec(f.path)?.[0]).filter((m) => m !== undefined));
  for (const m of modules) if (!files[`${m}index.ts`]) list.push({ path: `${m}index.ts`, content: '' });
  return list;
}

/** Violations of a synthetic tree (module index.ts files added), as `file: rule` strings. */
function check(files: Record<string, string>, tables?: TableDeclaration): string[] {
  return checkArchitecture(withIndexes(files), { tables }).violations.map((v) => `${v.file}: ${v.rule}`);
}

/** Violations of a synthetic tree exactly as given, as `file: rule` strings. */
function checkAsIs(files: Record<string, string>, tables?: TableDeclaration): string[] {
  const list: SourceFile[] = Object.entries(files).map(([path, content]) => ({ path, content }));
  return checkArchitecture(list, { tables }).violations.map((v) => `${v.file}: ${v.rule}`);
}

const NO_TABLES: TableDeclaration = { owners: {}, reads: {}, writes: {} };

describe('architecture checker', () => {
  it('maps files to folder nodes', () => {
    expect(nodeOf('src/contract/meetings.ts')).toBe('contract');
    expect(nodeOf('src/platform/db/migrations/index.ts')).toBe('platform/db');
    expect(nodeOf('src/platform/errors.ts')).toBe('platform/errors');
    expect(nodeOf('src/modules/booking/meeting-service.ts')).toBe('modules/booking');
    expect(nodeOf('src/modules/booking/rules/recurrence.ts')).toBe('modules/booking/rules');
    expect(nodeOf('src/services.ts')).toBe('app');
    expect(nodeOf('test/unit/x.ts')).toBeUndefined();
  });

  it('reports SQL outside repositories, in code only', () => {
    const service = [
      "import { sql, type Kysely } from 'kysely';",
      "// db.selectFrom('rooms') in a comment is fine",
      "const text = '.deleteFrom(';",
      'export async function f(db: Kysely<any>) {',
      "  await db\n    .selectFrom('rooms').selectAll().execute();",
      '  await sql`select 1`.execute(db);',
      "  return sql.table('rooms');",
      '}',
    ].join('\n');
    const violations = checkArchitecture(
      [
        { path: 'src/modules/a/index.ts', content: '' },
        { path: 'src/modules/a/a-service.ts', content: service },
        { path: 'src/modules/a/a-repository.ts', content: service },
        { path: 'src/platform/db/database.ts', content: service },
      ],
      { tables: NO_TABLES },
    ).violations;
    expect(violations.map(formatViolation)).toEqual([
      'src/modules/a/a-service.ts: sql: line 1: imports sql from kysely outside a *-repository.ts or src/platform/db/',
      'src/modules/a/a-service.ts: sql: line 6: .selectFrom( outside a *-repository.ts or src/platform/db/',
      'src/modules/a/a-service.ts: sql: line 7: sql`…` template outside a *-repository.ts or src/platform/db/',
      'src/modules/a/a-service.ts: sql: line 8: sql.table outside a *-repository.ts or src/platform/db/',
    ]);
  });
});

describe('architecture checker: layers', () => {
  it('enforces the layers', () => {
    expect(
      check({
        'src/contract/a.ts':
          "import { Type } from 'typebox';\nimport { newId } from '../platform/ids.js';\nimport type { B } from './b.js';",
        'src/contract/b.ts': 'export type B = string;',
        'src/platform/ids.ts': "export const newId = () => 'x';",
        'src/platform/db/x.ts': "import type { S } from '../../modules/m/s-service.js';",
        'src/modules/m/s-service.ts': "export type S = 1;\nimport { createServices } from '../../services.js';",
        'src/modules/m/routes.ts': "import type { Services } from '../../services.js';",
        'src/modules/n/routes.ts': "import { type Services, createServices } from '../../services.js';",
        'src/modules/m/other.ts': "import type { Services } from '../../services.js';",
        'src/modules/n/n-service.ts': "import { build } from '../../app.js';",
        'src/services.ts': 'export interface Services {}\nexport function createServices() {}',
        'src/app.ts': 'export const build = 1;',
      }),
    ).toEqual([
      'src/contract/a.ts: layering/contract',
      'src/modules/m/other.ts: composition-root',
      'src/modules/m/routes.ts: composition-root',
      'src/modules/m/s-service.ts: composition-root',
      'src/modules/n/n-service.ts: layering/app',
      'src/modules/n/routes.ts: composition-root',
      'src/platform/db/x.ts: layering/platform',
    ]);
  });

  it('keeps rules pure', () => {
    expect(
      check({
        'src/modules/m/rules/ok.ts': [
          "import { DateTime } from 'luxon';",
          "import type { Clock } from '../../../platform/clock/clock.js';",
          "import { errors } from '../../../platform/errors.js';",
          "import type { X } from '../../n/rules/x.js';",
        ].join('\n'),
        'src/modules/m/rules/bad.ts': [
          "import type { Kysely } from 'kysely';",
          "import { randomBytes } from 'node:crypto';",
          "import { systemClock } from '../../../platform/clock/clock.js';",
          "import type { Database } from '../../../platform/db/schema.js';",
          "import { f } from '../m-service.js';",
        ].join('\n'),
        'src/modules/m/m-service.ts': 'export const f = 1;',
        'src/modules/n/rules/x.ts': 'export type X = 1;',
        'src/platform/clock/clock.ts': 'export interface Clock {}\nexport const systemClock = {};',
        'src/platform/errors.ts': 'export const errors = {};',
        'src/platform/db/schema.ts': 'export interface Database {}',
      }),
    ).toEqual(Array(5).fill('src/modules/m/rules/bad.ts: layering/rules'));
  });
});

describe('architecture checker: boundaries and cycles', () => {
  it("reports another module's repository or routes, fastify off the edge, and unresolved imports", () => {
    expect(
      check({
        'src/modules/a/a-service.ts': [
          "import type { Row } from '../b/b-repository.js';",
          "import { bRoutes } from '../b/routes.js';",
          "import type { FastifyInstance } from 'fastify';",
          "import { B } from '../b/b-service.js';",
          "import { A } from './a-repository.js';",
          "import { gone } from './gone.js';",
        ].join('\n'),
        'src/modules/a/a-repository.ts': 'export const A = 1;',
        'src/modules/a/routes.ts': "import cors from '@fastify/cors';",
        'src/modules/b/b-repository.ts': 'export type Row = 1;',
        'src/modules/b/b-service.ts': 'export const B = 1;',
        'src/modules/b/routes.ts': 'export const bRoutes = 1;',
        'src/platform/http/kit.ts': "import fastify from 'fastify';",
      }),
    ).toEqual([
      'src/modules/a/a-service.ts: fastify',
      'src/modules/a/a-service.ts: module-boundary',
      'src/modules/a/a-service.ts: module-boundary',
      'src/modules/a/a-service.ts: surface',
      'src/modules/a/a-service.ts: unresolved-import',
    ]);
  });

  it('reports a cycle, counting type-only and dynamic imports but not imports into the composition root', () => {
    const files: SourceFile[] = withIndexes({
      'src/modules/a/index.ts': "export type { A } from './a-service.js';",
      'src/modules/a/a-service.ts': "import type { B } from '../b/index.js';\nexport type A = 1;",
      'src/modules/b/index.ts': "export { load } from './b-service.js';\nexport type { B } from './b-service.js';",
      'src/modules/b/b-service.ts': "export type B = 1;\nexport const load = () => import('../a/index.js');",
      'src/modules/c/routes.ts': "import type { Services } from '../../services.js';",
      'src/services.ts': "import '../modules/c/routes.js';\nexport interface Services {}",
    });
    const report = checkArchitecture(files);
    expect(report.cycles).toEqual([['modules/a', 'modules/b', 'modules/a']]);
    expect(report.violations.map((v) => `${v.file}: ${v.rule}`)).toEqual([
      'src/modules/a/a-service.ts: cycle',
      'src/modules/c/routes.ts: composition-root',
    ]);
    expect(report.graph.exempt.map((e) => `${e.from} -> ${e.to}`)).toEqual(['modules/c -> app']);
  });
});

describe('module surfaces and the composition root', () => {
  const b = {
    'src/modules/b/index.ts': "export { B } from './b-service.js';\nexport type { BRow } from './b-service.js';",
    'src/modules/b/b-service.ts': 'export const B = 1;\nexport type BRow = 1;',
    'src/modules/b/routes.ts': 'export const bRoutes = 1;',
    'src/modules/b/rules/pick.ts': 'export const pick = 1;',
  };

  it("reports imports of a module's internals from another module, services.ts and app.ts (type-only included)", () => {
    expect(
      check({
        ...b,
        'src/modules/a/a-service.ts':
          "import { B } from '../b/b-service.js';\nimport type { BRow } from '../b/b-service.js';\nimport { pick } from '../b/rules/pick.js';",
        'src/services.ts': "import { B } from './modules/b/b-service.js';",
        'src/app.ts': "import { bRoutes } from './modules/b/routes.js';\nimport './services.js';",
        'src/main.ts': "export type { BRow } from './modules/b/b-service.js';",
      }),
    ).toEqual([
      'src/app.ts: surface',
      'src/main.ts: surface',
      'src/modules/a/a-service.ts: surface',
      'src/modules/a/a-service.ts: surface',
      'src/services.ts: surface',
    ]);
  });

  it('passes the same tree going through index.ts and rules/', () => {
    expect(
      check({
        ...b,
        'src/modules/a/a-service.ts':
          "import { B } from '../b/index.js';\nimport type { BRow } from '../b/index.js';\nimport { pick } from '../b/rules/pick.js';",
        'src/services.ts': "import { B } from './modules/b/index.js';",
        'src/app.ts': "import { B } from './modules/b/index.js';\nimport './services.js';",
        'src/main.ts': "export type { BRow } from './modules/b/index.js';\nimport { createServices } from './services.js';",
      }),
    ).toEqual([]);
  });

  it('lets only app.ts, main.ts and the command-line entry points import services.ts: no routes file, no module, no platform file', () => {
    const tree = {
      'src/services.ts': 'export interface Services {}',
      'src/app.ts': "import type { Services } from './services.js';",
      'src/main.ts': "import { type Services } from './services.js';",
      'src/cli/tool.ts': "import { createServices } from '../services.js';",
      'src/cli/nested/deeper.ts': "import { createServices } from '../../services.js';",
      'src/modules/a/routes.ts': "import type { Services } from '../../services.js';",
      'src/modules/a/feed-routes.ts': "import type { Services } from '../../services.js';",
      'src/modules/a/index.ts': "import type { Services } from '../../services.js';",
      'src/platform/http/kit.ts': "import type { Services } from '../../services.js';",
    };
    const report = checkArchitecture(withIndexes(tree));
    expect(report.violations.map(formatViolation)).toEqual([
      "src/cli/nested/deeper.ts: composition-root: line 1: imports '../../services.js': only src/app.ts, src/main.ts and src/cli/*.ts import src/services.ts (take what you need as deps)",
      "src/modules/a/feed-routes.ts: composition-root: line 1: imports type-only '../../services.js': only src/app.ts, src/main.ts and src/cli/*.ts import src/services.ts (take what you need as deps)",
      "src/modules/a/index.ts: composition-root: line 1: imports type-only '../../services.js': only src/app.ts, src/main.ts and src/cli/*.ts import src/services.ts (take what you need as deps)",
      "src/modules/a/routes.ts: composition-root: line 1: imports type-only '../../services.js': only src/app.ts, src/main.ts and src/cli/*.ts import src/services.ts (take what you need as deps)",
      "src/platform/http/kit.ts: composition-root: line 1: imports type-only '../../services.js': only src/app.ts, src/main.ts and src/cli/*.ts import src/services.ts (take what you need as deps)",
    ]);
    // `npm run graph` shows them too (with imports of internals), and fails on them.
    expect(graphCrossings(report)).toHaveLength(5);

    const corrected = {
      ...tree,
      'src/modules/a/deps.ts': 'export interface ADeps {}',
      'src/modules/a/routes.ts': "import type { ADeps } from './deps.js';",
      'src/modules/a/feed-routes.ts': "import type { ADeps } from './deps.js';",
      'src/modules/a/index.ts': "export type { ADeps } from './deps.js';",
      'src/platform/http/kit.ts': 'export const kit = 1;',
      'src/cli/nested/deeper.ts': 'export const deeper = 1;',
    };
    const fixed = checkArchitecture(withIndexes(corrected));
    expect(fixed.violations).toEqual([]);
    expect(graphCrossings(fixed)).toEqual([]);
  });
});

describe('table ownership', () => {
  const tables: TableDeclaration = {
    owners: { rooms: 'site', projects: 'site', promo_codes: 'site', meetings: 'booking', meeting_slots: 'booking' },
    reads: { catalogue: ['rooms'] },
    writes: { payments: [{ table: 'promo_codes', why: 'used_count' }] },
  };
  const repo = (lines: string[]) =>
    ["import { sql, type Kysely } from 'kysely';", 'export class R {', '  constructor(private db: Kysely<any>) {}', ...lines, '}'].join(
      '\n',
    );

  it("reports SQL on another module's tables that is not declared, by builder and in sql templates", () => {
    const files = withIndexes({
      'src/modules/catalogue/catalogue-repository.ts': repo([
        "  a() { return this.db.selectFrom('rooms as r').innerJoin('meeting_slots as s', 's.asset_id', 'r.id').selectAll().execute(); }",
        "  b() { return this.db.selectFrom(['rooms', 'projects']).selectAll().execute(); }",
        '  c() { return sql`select m.id from meetings m where m.room_id = ${1}`.execute(this.db); }',
        "  d() { return this.db.updateTable('rooms').set({ name: 'x' }).execute(); }",
        "  e(t: 'desks') { return this.db.selectFrom(t).selectAll().execute(); }",
      ]),
      'src/modules/payments/payment-repository.ts': repo([
        "  take() { return this.db.updateTable('promo_codes').set({ used_count: 1 }).execute(); }",
        "  read() { return this.db.selectFrom('promo_codes').selectAll().execute(); }",
        "  wipe() { return sql`delete from meetings where id = ${'x'}`.execute(this.db); }",
      ]),
      'src/modules/booking/meeting-repository.ts': repo([
        "  own() { return this.db.with('pc', (db) => db.selectFrom('meeting_slots').selectAll()).selectFrom('pc').selectAll().execute(); }",
        '  slots() { return sql`insert into meeting_slots select * from meetings`.execute(this.db); }',
      ]),
    });
    expect(checkArchitecture(files, { tables }).violations.map(formatViolation)).toEqual([
      "src/modules/catalogue/catalogue-repository.ts: tables: line 4: .innerJoin('meeting_slots') reads meeting_slots, owned by booking, not declared for catalogue in scripts/lib/table-owners.ts",
      "src/modules/catalogue/catalogue-repository.ts: tables: line 5: .selectFrom('projects') reads projects, owned by site, not declared for catalogue in scripts/lib/table-owners.ts",
      'src/modules/catalogue/catalogue-repository.ts: tables: line 6: sql`… from meetings …` reads meetings, owned by booking, not declared for catalogue in scripts/lib/table-owners.ts',
      "src/modules/catalogue/catalogue-repository.ts: tables: line 7: .updateTable('rooms') writes rooms, owned by site, not declared for catalogue in scripts/lib/table-owners.ts",
      'src/modules/payments/payment-repository.ts: tables: line 6: sql`… delete from meetings …` writes meetings, owned by booking, not declared for payments in scripts/lib/table-owners.ts',
    ]);
  });

  it('passes the same tree with the reads declared and the foreign writes gone', () => {
    const files = withIndexes({
      'src/modules/catalogue/catalogue-repository.ts': repo([
        "  a() { return this.db.selectFrom('rooms as r').innerJoin('meeting_slots as s', 's.asset_id', 'r.id').selectAll().execute(); }",
        "  b() { return this.db.selectFrom(['rooms', 'projects']).selectAll().execute(); }",
        '  c() { return sql`select m.id from meetings m where m.room_id = ${1}`.execute(this.db); }',
      ]),
      'src/modules/payments/payment-repository.ts': repo([
        "  take() { return this.db.updateTable('promo_codes').set({ used_count: 1 }).execute(); }",
        "  read() { return this.db.selectFrom('promo_codes').selectAll().execute(); }",
      ]),
    });
    const declared = { ...tables, reads: { catalogue: ['rooms', 'projects', 'meetings', 'meeting_slots'] } };
    expect(checkArchitecture(files, { tables: declared }).violations).toEqual([]);
  });
});

describe('the table declaration', () => {
  it('declares an owner for every table of platform/db/schema.ts, and every owner is a module or platform', () => {
    const schema = readFileSync(new URL('../../src/platform/db/schema.ts', import.meta.url), 'utf8');
    const body = /export interface Database \{([^}]*)\}/.exec(schema)![1]!;
    const schemaTables = [...body.matchAll(/^\s*([a-z_]+):/gm)].map((m) => m[1]!).sort();
    expect(Object.keys(TABLES.owners).sort()).toEqual(schemaTables);
    const modules = loadSourceFiles(root).flatMap((f) => /^src\/modules\/([^/]+)\//.exec(f.path)?.[1] ?? []);
    const known = new Set([...modules, 'platform']);
    const named = [...Object.values(TABLES.owners), ...Object.keys(TABLES.reads), ...Object.keys(TABLES.writes)];
    expect(named.filter((m) => !known.has(m))).toEqual([]);
    for (const [m, writes] of Object.entries(TABLES.writes))
      for (const w of writes) expect(TABLES.owners[w.table], `${m} writes ${w.table}`).not.toBe(m);
  });

  it('agrees with the ownership table of docs/architecture.md', () => {
    const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    const lines = doc.split('\n');
    const header = lines.findIndex((l) => /^\| module \| owns/.test(l));
    expect(header).toBeGreaterThan(-1);
    const tableNames = new Set(Object.keys(TABLES.owners));
    /** Table names in a cell, leaving out parenthesized remarks. */
    const namesIn = (cell: string) => {
      let text = cell;
      while (/\([^()]*\)/.test(text)) text = text.replace(/\([^()]*\)/g, '');
      return [...text.matchAll(/[a-z_]+/g)]
        .map((m) => m[0])
        .filter((w) => tableNames.has(w))
        .sort();
    };
    const fromDoc: Record<string, { owns: string[]; reads: string[]; writes: string[] }> = {};
    for (const line of lines.slice(header + 2)) {
      if (!line.startsWith('|')) break;
      const [m, owns, reads, writes] = line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim());
      fromDoc[m!] = { owns: namesIn(owns!), reads: namesIn(reads!), writes: namesIn(writes!) };
    }
    const modules = new Set([...Object.values(TABLES.owners), ...Object.keys(TABLES.reads), ...Object.keys(TABLES.writes)]);
    const fromDeclaration: typeof fromDoc = {};
    for (const m of modules) {
      fromDeclaration[m] = {
        owns: Object.keys(TABLES.owners)
          .filter((t) => TABLES.owners[t] === m)
          .sort(),
        reads: [...(TABLES.reads[m] ?? [])].sort(),
        writes: (TABLES.writes[m] ?? []).map((w) => w.table).sort(),
      };
    }
    expect(fromDoc).toEqual(fromDeclaration);
  });
});

describe('module layout', () => {
  it('reports a module without index.ts, routes or job handlers outside their files, a sub-folder, and impure rules', () => {
    expect(
      checkAsIs({
        'src/modules/a/a-service.ts': [
          "import type { JobHandler } from '../../platform/jobs/handler.js';",
          "import { timedJob } from '../../platform/jobs/timed.js';",
          "export function routes(app: any) { app.get('/things', async () => ({})); app.route({ method: 'GET', url: '/x', handler: () => 1 }); }",
          'export function job(): JobHandler<{ at: number }> { return null!; }',
          'export const parts = new Map<string, number>();',
          "export const year = parts.get('year');",
        ].join('\n'),
        'src/modules/a/helpers/util.ts': 'export const u = 1;',
        'src/modules/a/rules/deadline.ts': 'export const late = (at: number) => at < Date.now() || Math.random() > 0.5 || !!process.env.X;',
        'src/modules/b/index.ts':
          "import type { JobHandler } from '../../platform/jobs/handler.js';\nexport interface BModule { jobs: JobHandler<unknown>[] }",
        'src/modules/b/jobs.ts':
          "import { timedJob } from '../../platform/jobs/timed.js';\nimport type { JobHandler } from '../../platform/jobs/handler.js';\nexport const job: JobHandler<number> = timedJob({});",
        'src/modules/b/routes.ts': "export function r(app: any) { app.post('/b', async () => 1); }",
        'src/modules/b/feed-routes.ts': "export function r(app: any) { app.get('/b/feed', async () => 1); }",
        'src/platform/jobs/handler.ts': 'export interface JobHandler<T> { name: string }',
        'src/platform/jobs/timed.ts': 'export const timedJob = (p: object) => p as never;',
      }),
    ).toEqual([
      'src/modules/a/a-service.ts: layout/jobs',
      'src/modules/a/a-service.ts: layout/jobs',
      'src/modules/a/a-service.ts: layout/routes',
      'src/modules/a/a-service.ts: layout/routes',
      'src/modules/a/helpers/: layout/folders',
      'src/modules/a/index.ts: layout/index',
      'src/modules/a/rules/deadline.ts: layout/rules',
      'src/modules/a/rules/deadline.ts: layout/rules',
      'src/modules/a/rules/deadline.ts: layout/rules',
    ]);
  });

  it('passes the same tree laid out: index.ts, routes in routes.ts, the handler in jobs.ts, no sub-folder, time as an argument', () => {
    expect(
      checkAsIs({
        'src/modules/a/index.ts':
          "export { job } from './jobs.js';\nexport async function register(app: any) { app.get('/index-route', async () => 1); }",
        'src/modules/a/a-service.ts':
          "export const parts = new Map<string, number>();\nexport const year = parts.get('year');\nexport const u = 1;",
        'src/modules/a/routes.ts':
          "export function routes(app: any) { app.get('/things', async () => ({})); app.route({ method: 'GET', url: '/x', handler: () => 1 }); }",
        'src/modules/a/jobs.ts': [
          "import type { JobHandler } from '../../platform/jobs/handler.js';",
          "import { timedJob } from '../../platform/jobs/timed.js';",
          'export function job(): JobHandler<{ at: number }> { return timedJob({}); }',
        ].join('\n'),
        'src/modules/a/rules/deadline.ts': 'export const late = (at: number, now: number) => at < now;',
        'src/platform/jobs/handler.ts': 'export interface JobHandler<T> { name: string }',
        'src/platform/jobs/timed.ts': 'export const timedJob = (p: object) => p as never;',
      }),
    ).toEqual([]);
  });
});
