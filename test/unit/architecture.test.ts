/**
 * Architecture rules of src/ (see scripts/lib/architecture.ts): layering, module
 * boundaries, fastify at the edge, SQL only in repositories, no cycles between
 * folder nodes. The same checks run as `npm run check:architecture` and `npm run graph`.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkArchitecture, formatViolation, loadSourceFiles, nodeOf, type SourceFile } from '../../scripts/lib/architecture.js';

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

/** Violations of a synthetic tree, as `file: rule` strings. */
function check(files: Record<string, string>): string[] {
  const list: SourceFile[] = Object.entries(files).map(([path, content]) => ({ path, content }));
  return checkArchitecture(list).violations.map((v) => `${v.file}: ${v.rule}`);
}

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
      '// db.selectFrom(\'rooms\') in a comment is fine',
      "const text = '.deleteFrom(';",
      'export async function f(db: Kysely<any>) {',
      "  await db\n    .selectFrom('rooms').selectAll().execute();",
      '  await sql`select 1`.execute(db);',
      "  return sql.table('rooms');",
      '}',
    ].join('\n');
    const violations = checkArchitecture([
      { path: 'src/modules/a/a-service.ts', content: service },
      { path: 'src/modules/a/a-repository.ts', content: service },
      { path: 'src/platform/db/database.ts', content: service },
    ]).violations;
    expect(violations.map(formatViolation)).toEqual([
      'src/modules/a/a-service.ts: sql: line 1: imports sql from kysely outside a *-repository.ts or src/platform/db/',
      'src/modules/a/a-service.ts: sql: line 6: .selectFrom( outside a *-repository.ts or src/platform/db/',
      'src/modules/a/a-service.ts: sql: line 7: sql`…` template outside a *-repository.ts or src/platform/db/',
      'src/modules/a/a-service.ts: sql: line 8: sql.table outside a *-repository.ts or src/platform/db/',
    ]);
  });

  it('enforces the layers', () => {
    expect(
      check({
        'src/contract/a.ts': "import { Type } from 'typebox';\nimport { newId } from '../platform/ids.js';\nimport type { B } from './b.js';",
        'src/contract/b.ts': "export type B = string;",
        'src/platform/ids.ts': "export const newId = () => 'x';",
        'src/platform/db/x.ts': "import type { S } from '../../modules/m/s-service.js';",
        'src/modules/m/s-service.ts': "export type S = 1;\nimport { createServices } from '../../services.js';",
        'src/modules/m/routes.ts': "import type { Services } from '../../services.js';",
        'src/modules/n/routes.ts': "import { type Services, createServices } from '../../services.js';",
        'src/modules/m/other.ts': "import type { Services } from '../../services.js';",
        'src/services.ts': 'export interface Services {}\nexport function createServices() {}',
      }),
    ).toEqual([
      'src/contract/a.ts: layering/contract',
      'src/modules/m/other.ts: layering/app',
      'src/modules/m/s-service.ts: layering/app',
      'src/modules/n/routes.ts: layering/app',
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
        'src/modules/m/m-service.ts': "export const f = 1;",
        'src/modules/n/rules/x.ts': 'export type X = 1;',
        'src/platform/clock/clock.ts': 'export interface Clock {}\nexport const systemClock = {};',
        'src/platform/errors.ts': 'export const errors = {};',
        'src/platform/db/schema.ts': 'export interface Database {}',
      }),
    ).toEqual(Array(5).fill('src/modules/m/rules/bad.ts: layering/rules'));
  });

  it('reports another module\'s repository or routes, fastify off the edge, and unresolved imports', () => {
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
      'src/modules/a/a-service.ts: unresolved-import',
    ]);
  });

  it('reports a cycle, counting type-only and dynamic imports but not the routes\' Services import', () => {
    const files: SourceFile[] = [
      { path: 'src/modules/a/a-service.ts', content: "import type { B } from '../b/b-service.js';" },
      { path: 'src/modules/b/b-service.ts', content: "export type B = 1;\nexport const load = () => import('../a/a-service.js');" },
      { path: 'src/modules/c/routes.ts', content: "import type { Services } from '../../services.js';" },
      { path: 'src/services.ts', content: "import '../modules/c/routes.js';\nexport interface Services {}" },
    ];
    const report = checkArchitecture(files);
    expect(report.cycles).toEqual([['modules/a', 'modules/b', 'modules/a']]);
    expect(report.violations.map((v) => `${v.file}: ${v.rule}`)).toEqual(['src/modules/a/a-service.ts: cycle']);
    expect(report.graph.exempt.map((e) => `${e.from} -> ${e.to}`)).toEqual(['modules/c -> app']);
  });
});
