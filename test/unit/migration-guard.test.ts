/**
 * Expand then contract: migrations after GUARD_BASELINE (013) take no step that breaks the
 * previous release serving beside them (drop, rename, type change, NOT NULL without a
 * default on an existing table) unless the file carries a `// contract:` comment saying which
 * earlier release stopped using it. The guard itself is tried on synthetic sources.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { destructiveSteps, GUARD_BASELINE } from '../support/migration-guard.js';

const DIR = fileURLToPath(new URL('../../src/platform/db/migrations/', import.meta.url));
const migrationFiles = readdirSync(DIR).filter((f) => /^\d{3}-.*\.ts$/.test(f));

describe('expand-then-contract guard over src/platform/db/migrations', () => {
  it('finds the migrations, the baseline among them', () => {
    expect(migrationFiles.some((f) => f.startsWith(`${GUARD_BASELINE}-`))).toBe(true);
  });

  it('no migration after the baseline takes a destructive step without a // contract: comment', () => {
    const offending = migrationFiles
      .filter((f) => f.slice(0, 3) > GUARD_BASELINE)
      .map((f) => ({ file: f, findings: destructiveSteps(readFileSync(join(DIR, f), 'utf8')) }))
      .filter((r) => r.findings.length > 0);
    expect(offending, 'write it expand-then-contract (CONTRIBUTING.md "Migrations and upgrades")').toEqual([]);
  });
});

const wrap = (up: string) => `import type { Kysely } from 'kysely';
export async function up(db: Kysely<unknown>): Promise<void> {
${up}
}
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('new_things').execute();
}
`;

describe('the guard on synthetic migrations', () => {
  const destructive: Record<string, string> = {
    dropTable: `await db.schema.dropTable('meetings').execute();`,
    dropColumn: `await db.schema.alterTable('apps').dropColumn('service_user_id').execute();`,
    renameColumn: `await db.schema.alterTable('apps').renameColumn('name', 'title').execute();`,
    renameTo: `await db.schema.alterTable('apps').renameTo('applications').execute();`,
    'alterColumn type change': `await db.schema.alterTable('apps').alterColumn('name', (c) => c.setDataType('varchar(40)')).execute();`,
    'alterColumn setNotNull': `await db.schema.alterTable('apps').alterColumn('name', (c) => c.setNotNull()).execute();`,
    'addColumn NOT NULL without default': `await db.schema\n    .alterTable('apps')\n    .addColumn('tier', 'text', (c) => c.notNull())\n    .execute();`,
    'DROP TABLE/COLUMN (SQL)': 'await sql`ALTER TABLE apps DROP COLUMN name`.execute(db);',
    'RENAME (SQL)': 'await sql`alter table apps rename to applications`.execute(db);',
    'ALTER COLUMN TYPE / SET NOT NULL (SQL)': 'await sql`alter table apps alter column name type varchar(10)`.execute(db);',
    'ADD COLUMN NOT NULL without DEFAULT (SQL)': 'await sql`alter table apps add column tier text not null`.execute(db);',
  };

  for (const [step, up] of Object.entries(destructive)) {
    it(`refuses ${step}`, () => {
      expect(destructiveSteps(wrap(up)).map((f) => f.step)).toContain(step);
    });
  }

  it('allows one with a // contract: comment naming the release that stopped using it', () => {
    const source = `// contract: release 0.4 stopped reading apps.service_user_id (expanded in 014)\n${wrap(destructive.dropColumn!)}`;
    expect(destructiveSteps(source)).toEqual([]);
    expect(destructiveSteps(`// contract:\n${wrap(destructive.dropColumn!)}`), 'an empty explanation is none').not.toEqual([]);
  });

  it('allows expanding steps, and does not look at down', () => {
    const expanding = [
      `await db.schema.createTable('new_things').addColumn('id', 'text', (c) => c.notNull().primaryKey()).execute();`,
      `await db.schema.alterTable('apps').addColumn('tier', 'text').execute();`,
      `await db.schema.alterTable('apps').addColumn('tier', 'integer', (c) => c.notNull().defaultTo(0)).execute();`,
      `await db.schema.createIndex('apps_tier').on('apps').column('tier').execute();`,
      'await sql`alter table apps add column tier integer not null default 0`.execute(db);',
    ].join('\n');
    expect(destructiveSteps(wrap(expanding))).toEqual([]);
  });

  it('the migrations up to the baseline would need comments: 002 drops nothing in up, a drop in up is found', () => {
    // Sanity of the up/down split on a real file: 002's down drops columns, its up does not.
    const m002 = readFileSync(
      join(
        DIR,
        migrationFiles.find((f) => f.startsWith('002-'))!,
      ),
      'utf8',
    );
    expect(destructiveSteps(m002)).toEqual([]);
    expect(destructiveSteps(m002.replace(/function\s+down\s*\(/, 'function later('))).not.toEqual([]);
  });
});
