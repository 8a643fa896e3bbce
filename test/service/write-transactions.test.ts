/**
 * Write transactions keep their guarantees however they reach the database:
 * SQLite commits transactions that arrive together in one group (each in its own
 * savepoint), PostgreSQL sends plain inserts of a transaction together before its
 * next statement or commit. On both engines:
 * - a transaction is answered only once it is committed;
 * - on SQLite, transactions run one at a time and see each other's writes in order;
 * - a failing transaction writes nothing and does not disturb the others.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Database } from '../../src/platform/db/schema.js';
import { openStorage, type Storage } from '../../src/platform/db/database.js';
import { writeTransaction } from '../../src/platform/db/transactions.js';
import {
  aheadOf,
  combineInserts,
  inlineCombined,
  inlineParameters,
  plainInsertRows,
  ridingAlong,
} from '../../src/platform/db/pg-driver.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../support/test-database.js';
import { insertRows } from '../../src/platform/db/statements.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`write transactions (${TEST_ENGINE})`, () => {
  let database: TestDatabase;
  let storage: Storage;
  let other: Storage; // a second connection: sees only what is committed
  const statements: string[] = [];
  const trips: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    storage = await openStorage(database.url, { onQuery: (s) => statements.push(s), onRoundTrip: (s) => trips.push(s) });
    other = await openStorage(database.url);
  });
  afterAll(async () => {
    await other?.close();
    await storage?.close();
    await database?.drop();
  });

  const names = async (prefix: string) =>
    (await other.db.selectFrom('settings').select('name').where('name', 'like', `${prefix}%`).orderBy('name').execute()).map((r) => r.name);

  it('transactions arriving together: each answered after its commit, in order, a failing one alone rolled back', async () => {
    statements.length = 0;
    const seen: number[] = [];
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        writeTransaction(storage.db, storage.engine, async (trx) => {
          const before = await trx.selectFrom('settings').select('name').where('name', 'like', 'g1-%').execute();
          seen.push(before.length);
          await trx
            .insertInto('settings')
            .values({ name: `g1-${String(i).padStart(2, '0')}`, value: 'x' })
            .execute();
          if (i === 5) throw new Error('refused after writing');
          return i;
        }).then(async (i) => {
          // Answered: already visible to another connection.
          expect(await names(`g1-${String(i).padStart(2, '0')}`)).toHaveLength(1);
          return i;
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(results.map((_, i) => (i === 5 ? 'rejected' : 'fulfilled')));
    expect((results[5] as PromiseRejectedResult).reason.message).toBe('refused after writing');
    expect(await names('g1-')).toEqual(
      Array.from({ length: 12 }, (_, i) => `g1-${String(i).padStart(2, '0')}`).filter((n) => n !== 'g1-05'),
    );
    if (TEST_ENGINE === 'sqlite') {
      // One at a time, each seeing the writes of those before it in its group (the refused one's undone).
      // (PostgreSQL runs them side by side; row locks order what must be ordered.)
      expect(seen).toEqual([0, 1, 2, 3, 4, 5, 5, 6, 7, 8, 9, 10]);
      // Grouped: fewer commits than transactions.
      const commits = statements.filter((s) => /^commit$/i.test(s.trim())).length;
      expect(commits).toBeGreaterThan(0);
      expect(commits).toBeLessThan(12);
    }
  });

  it('a failing statement inside a transaction rolls back its own earlier inserts, whichever statement reports it', async () => {
    await writeTransaction(storage.db, storage.engine, (trx) => trx.insertInto('settings').values({ name: 'dup', value: '1' }).execute());
    await expect(
      writeTransaction(storage.db, storage.engine, async (trx) => {
        await trx.insertInto('settings').values({ name: 'f1-a', value: 'x' }).execute();
        await trx.insertInto('settings').values({ name: 'dup', value: '2' }).execute(); // primary key taken
        await trx.insertInto('settings').values({ name: 'f1-b', value: 'x' }).execute();
      }),
    ).rejects.toThrow(/unique|duplicate/i);
    expect(await names('f1-')).toEqual([]);
    expect((await other.db.selectFrom('settings').select('value').where('name', '=', 'dup').executeTakeFirst())?.value).toBe('1');
  });

  it.runIf(TEST_ENGINE === 'postgres')('PostgreSQL: plain inserts go out together, before the next read and at the commit', async () => {
    statements.length = 0;
    trips.length = 0;
    const count = await writeTransaction(storage.db, storage.engine, async (trx) => {
      await trx.insertInto('settings').values({ name: 'p1-a', value: 'x' }).execute();
      await trx
        .insertInto('settings')
        .values([
          { name: 'p1-b', value: 'x' },
          { name: 'p1-c', value: 'x' },
        ])
        .execute();
      // A read in the transaction sees them (they are sent first).
      const n = (await trx.selectFrom('settings').select('name').where('name', 'in', ['p1-a', 'p1-b', 'p1-c', 'p1-d']).execute()).length;
      await trx.insertInto('settings').values({ name: 'p1-d', value: 'x' }).execute();
      await trx.insertInto('settings').values({ name: 'p1-e', value: 'x' }).execute();
      return n;
    });
    expect(count).toBe(3);
    expect(await names('p1-')).toEqual(['p1-a', 'p1-b', 'p1-c', 'p1-d', 'p1-e']);
    expect(statements.filter((s) => /^insert/.test(s))).toHaveLength(4);
    // begin and the first inserts ride with the read, the last inserts with the commit: two round trips.
    expect(trips).toHaveLength(2);
    expect(trips[0]).toMatch(
      /^begin;\nwith w0 as \(insert into "settings" \("name", "value"\) values \('p1-a', 'x'\)\), w1 as .*;\nselect "name" from "settings" where "name" in \('p1-a', 'p1-b', 'p1-c', 'p1-d'\)$/s,
    );
    expect(trips[1]).toMatch(/^with w0 as \(insert .*;\ncommit$/s);
  });

  it.runIf(TEST_ENGINE === 'postgres')(
    'PostgreSQL: a value that cannot be a literal, or quotes in the text, send each part on its own',
    async () => {
      trips.length = 0;
      await writeTransaction(storage.db, storage.engine, async (trx) => {
        await trx.insertInto('settings').values({ name: "q1-it's", value: "a'b\\c" }).execute();
        await trx.selectFrom('settings').select('name').where('name', '=', 'q1-none').execute();
      });
      expect(trips[0]).toMatch(/^begin;\nwith w0 as|^begin;\ninsert into/);
      expect(await other.db.selectFrom('settings').select('value').where('name', '=', "q1-it's").executeTakeFirst()).toEqual({
        value: "a'b\\c",
      });
      trips.length = 0;
      await writeTransaction(storage.db, storage.engine, async (trx) => {
        await trx.insertInto('settings').values({ name: 'q2', value: 'x' }).execute();
        await sql`select ${'q2'}::text as n where 'a' = 'a'`.execute(trx); // a string literal in the text
      });
      expect(trips.map((s) => s.split('\n')[0].replace(/\s.*$/s, ''))).toEqual(['begin', 'insert', 'select', 'commit']);
      expect(await names('q2')).toEqual(['q2']);
    },
  );

  /** Starts a riding read of the settings named like `prefix%` in `trx`; resolves once started, with the names to come. */
  const namesAhead = async (trx: Kysely<Database>, prefix: string) => {
    const q = trx
      .selectFrom('settings')
      .select('name')
      .where('name', '>=', prefix)
      .where('name', '<', `${prefix}~`)
      .orderBy('name')
      .compile();
    const started = await trx.executeQuery(ridingAlong(q));
    return { names: aheadOf(started).then((r) => r.rows.map((x) => x.name)) };
  };

  it('a riding read sees what its transaction wrote before it, not what it writes after, and rides with the next statement', async () => {
    await writeTransaction(storage.db, storage.engine, (trx) => trx.insertInto('settings').values({ name: 'r1-0', value: 'x' }).execute());
    trips.length = 0;
    const { seen, next } = await writeTransaction(storage.db, storage.engine, async (trx) => {
      await trx.insertInto('settings').values({ name: 'r1-a', value: 'x' }).execute();
      const ahead = await namesAhead(trx, 'r1-');
      await trx.insertInto('settings').values({ name: 'r1-b', value: 'x' }).execute();
      const next = (await trx.selectFrom('settings').select('name').where('name', '=', 'r1-b').execute()).length;
      return { seen: await ahead.names, next };
    });
    expect(seen).toEqual(['r1-0', 'r1-a']);
    expect(next).toBe(1);
    expect(await names('r1-')).toEqual(['r1-0', 'r1-a', 'r1-b']);
    if (TEST_ENGINE === 'postgres') {
      // begin, the first insert, the riding read, the second insert and the read: one message; then the commit.
      expect(trips).toHaveLength(2);
      expect(trips[0]).toMatch(
        /^begin;\ninsert into "settings" .*;\nselect "name" from "settings" where "name" >= 'r1-' .*;\ninsert into .*;\nselect "name"/s,
      );
      expect(trips[1]).toBe('commit');
    }
  });

  it('a riding read that nothing follows is sent on its own, and one of a failed transaction fails with it', async () => {
    trips.length = 0;
    const alone = await writeTransaction(storage.db, storage.engine, async (trx) => {
      await trx.insertInto('settings').values({ name: 'r2-a', value: 'x' }).execute();
      const ahead = await namesAhead(trx, 'r2-');
      return ahead.names; // awaited with no statement after it
    });
    expect(alone).toEqual(['r2-a']);
    if (TEST_ENGINE === 'postgres') expect(trips.map((t) => t.split(/\s/)[0])).toEqual(['begin;', 'commit']);
    let pendingRead: Promise<string[]> | undefined;
    await expect(
      writeTransaction(storage.db, storage.engine, async (trx) => {
        const ahead = await namesAhead(trx, 'r3-');
        pendingRead = ahead.names;
        pendingRead.catch(() => {});
        await trx.insertInto('settings').values({ name: 'dup', value: '3' }).execute(); // primary key taken (above)
        await trx.selectFrom('settings').select('name').where('name', '=', 'r3-x').execute();
      }),
    ).rejects.toThrow(/unique|duplicate/i);
    if (TEST_ENGINE === 'postgres') await expect(pendingRead).rejects.toThrow(/unique|duplicate/i);
    else expect(await pendingRead).toEqual([]);
  });

  it.runIf(TEST_ENGINE === 'postgres')(
    'PostgreSQL: a row lock taken first rides with begin and the read under it, and still holds another transaction back',
    async () => {
      await sql`create table lock_probe (id text primary key)`.execute(other.db);
      await sql`insert into lock_probe (id) values ('x')`.execute(other.db);
      // The form withAssetLock takes (platform/db/transactions.ts), on a table of this test's own.
      const lock = (db: Kysely<Database>) => sql`select id from ${sql.table('lock_probe')} where id = ${'x'} for update`.execute(db);
      const order: string[] = [];
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      trips.length = 0;
      const a = storage.db.transaction().execute(async (trx) => {
        await lock(trx);
        await trx.selectFrom('settings').select('name').where('name', '=', 'lock-a').execute();
        await held;
        order.push('a');
      });
      await sleep(100);
      expect(trips).toEqual([
        `begin;\nselect id from "lock_probe" where id = 'x' for update;\nselect "name" from "settings" where "name" = 'lock-a'`,
      ]);
      const b = other.db.transaction().execute(async (trx) => {
        await lock(trx);
        await trx.selectFrom('settings').select('name').where('name', '=', 'lock-b').execute();
        order.push('b');
      });
      await sleep(200);
      expect(order).toEqual([]); // b waits for a's lock
      release();
      await Promise.all([a, b]);
      expect(order).toEqual(['a', 'b']);
    },
  );
});

describe(`insertRows (${TEST_ENGINE})`, () => {
  let database: TestDatabase;
  let storage: Storage;
  const statements: string[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
    storage = await openStorage(database.url, { onQuery: (s) => statements.push(s) });
  });
  afterAll(async () => {
    await storage?.close();
    await database?.drop();
  });

  it('writes the statement Kysely compiles for the same rows, and falls back to Kysely when the rows differ', async () => {
    const rows = [
      { name: 'ir-a', value: 'x' },
      { name: 'ir-b', value: 'y' },
    ];
    statements.length = 0;
    await insertRows(storage.db, 'settings', rows);
    expect(statements).toEqual([storage.db.insertInto('settings').values(rows).compile().sql]);
    // A column left undefined is left out, as Kysely leaves it out.
    await insertRows(storage.db, 'settings', [{ name: 'ir-c', value: 'z', updated_at: undefined } as never]);
    expect(statements[1]).toBe(storage.db.insertInto('settings').values({ name: 'ir-c', value: 'z' }).compile().sql);
    // Rows with different columns: Kysely's builder (defaults fill the gaps).
    const mixed = [{ name: 'ir-d', value: 'w' }, { name: 'ir-e' } as never];
    await insertRows(storage.db, 'settings', mixed).catch(() => {});
    expect(statements[2]).toBe(storage.db.insertInto('settings').values(mixed).compile().sql);
    const stored = await storage.db
      .selectFrom('settings')
      .select(['name', 'value'])
      .where('name', 'like', 'ir-%')
      .orderBy('name')
      .execute();
    expect(stored.slice(0, 3)).toEqual([
      { name: 'ir-a', value: 'x' },
      { name: 'ir-b', value: 'y' },
      { name: 'ir-c', value: 'z' },
    ]);
  });
});

describe('plain inserts that may wait (PostgreSQL)', () => {
  it('recognizes only VALUES inserts of parameters without on conflict or returning, and counts their rows', () => {
    expect(plainInsertRows('insert into "t" ("a", "b") values ($1, $2)')).toBe(1);
    expect(plainInsertRows('insert into "t" ("a", "b") values ($1, $2), ($3, $4), ($5, $6)')).toBe(3);
    expect(plainInsertRows('insert into "t" ("a") values ($1) on conflict do nothing')).toBeNull();
    expect(plainInsertRows('insert into "t" ("a") values ($1) returning "a"')).toBeNull();
    expect(plainInsertRows('insert into "t" ("a") values (default)')).toBeNull();
    expect(plainInsertRows('insert into "t" ("a") select "a" from "u"')).toBeNull();
    expect(plainInsertRows('update "t" set "a" = $1')).toBeNull();
  });

  it('writes parameters as literals only where that is plainly safe', () => {
    const esc = (v: string) => `'${v.replace(/'/g, "''")}'`;
    expect(inlineParameters('select "a" from "t" where "id" = $1 and "n" in ($2, $3) limit $4', ['x', 1, null, 10], esc)).toBe(
      `select "a" from "t" where "id" = 'x' and "n" in ('1', NULL) limit '10'`,
    );
    expect(inlineParameters('insert into "t" ("a", "b") values ($1, $2)', ["it's", 1795606918192], esc)).toBe(
      `insert into "t" ("a", "b") values ('it''s', '1795606918192')`,
    );
    expect(inlineParameters('select $1 || $2', ['a', 'b'], esc)).toBeNull(); // no column gives the type
    expect(inlineParameters('select "a" from "t" where "a" like $1', ['x%'], esc)).toBeNull();
    expect(inlineParameters(`select 'lit' where "a" = $1`, ['x'], esc)).toBeNull(); // a string literal in the text
    expect(inlineParameters('select 1 -- c\nwhere "a" = $1', ['x'], esc)).toBeNull();
    expect(inlineParameters('select "a" from "t" where "a" = $1', [true], esc)).toBeNull();
    expect(inlineParameters('select "a" from "t" where "a" = $1', [1e21], esc)).toBeNull();
    expect(inlineParameters('select "a" from "t" where "a" = $1', [Buffer.from('x')], esc)).toBeNull();
    expect(inlineParameters('select "a" from "t" where "a" = $1', ['nul\0'], esc)).toBeNull();
  });

  it('combines inserts into one statement with their parameters renumbered', () => {
    const combined = combineInserts([
      CompiledQuery.raw('insert into "t" ("a", "b") values ($1, $2)', [1, 2]),
      CompiledQuery.raw('insert into "u" ("c") values ($1), ($2)', [3, 4]),
    ]);
    expect(combined.sql).toBe(
      'with w0 as (insert into "t" ("a", "b") values ($1, $2)), w1 as (insert into "u" ("c") values ($3), ($4)) select 1',
    );
    expect(combined.parameters).toEqual([1, 2, 3, 4]);
  });

  it('writes combined inserts with literals as templating the combined text would, or not at all', () => {
    const esc = (s: string) => `'${s.replace(/'/g, "''")}'`;
    const inserts = [
      CompiledQuery.raw('insert into "t" ("a", "b") values ($1, $2)', ["it's", 1795606918192]),
      CompiledQuery.raw('insert into "u" ("c", "d") values ($1, $2), ($3, $4)', ['x', null, 'y', 2.5]),
      CompiledQuery.raw('insert into "v" ("e") values ($1)', ['$1 and $2']),
    ];
    const combined = combineInserts(inserts);
    const expected = inlineParameters(combined.sql, combined.parameters, esc);
    expect(expected).not.toBeNull();
    expect(inlineCombined(inserts, esc)).toBe(expected);
    // A value with no literal form (a buffer) keeps the whole run parameterized.
    const withBuffer = [...inserts, CompiledQuery.raw('insert into "w" ("f") values ($1)', [Buffer.from('x')])];
    expect(inlineCombined(withBuffer, esc)).toBeNull();
  });
});
