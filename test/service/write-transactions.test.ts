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
import { CompiledQuery } from 'kysely';
import { openStorage, type Storage } from '../../src/platform/db/database.js';
import { writeTransaction } from '../../src/platform/db/transactions.js';
import { combineInserts, plainInsertRows } from '../../src/platform/db/pg-driver.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../support/test-database.js';

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
          await trx.insertInto('settings').values({ name: `g1-${String(i).padStart(2, '0')}`, value: 'x' }).execute();
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
    expect(await names('g1-')).toEqual(Array.from({ length: 12 }, (_, i) => `g1-${String(i).padStart(2, '0')}`).filter((n) => n !== 'g1-05'));
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
      await trx.insertInto('settings').values([{ name: 'p1-b', value: 'x' }, { name: 'p1-c', value: 'x' }]).execute();
      // A read in the transaction sees them (they are sent first).
      const n = (await trx.selectFrom('settings').select('name').where('name', 'like', 'p1-%').execute()).length;
      await trx.insertInto('settings').values({ name: 'p1-d', value: 'x' }).execute();
      await trx.insertInto('settings').values({ name: 'p1-e', value: 'x' }).execute();
      return n;
    });
    expect(count).toBe(3);
    expect(await names('p1-')).toEqual(['p1-a', 'p1-b', 'p1-c', 'p1-d', 'p1-e']);
    expect(statements.filter((s) => /^insert/.test(s))).toHaveLength(4);
    expect(trips.map((s) => s.replace(/\(.*$/s, '').trim())).toEqual(['begin', 'with w0 as', 'select "name" from "settings" where "name" like $1', 'with w0 as', 'commit']);
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

  it('combines inserts into one statement with their parameters renumbered', () => {
    const combined = combineInserts([
      CompiledQuery.raw('insert into "t" ("a", "b") values ($1, $2)', [1, 2]),
      CompiledQuery.raw('insert into "u" ("c") values ($1), ($2)', [3, 4]),
    ]);
    expect(combined.sql).toBe('with w0 as (insert into "t" ("a", "b") values ($1, $2)), w1 as (insert into "u" ("c") values ($3), ($4)) select 1');
    expect(combined.parameters).toEqual([1, 2, 3, 4]);
  });
});
