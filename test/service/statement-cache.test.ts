/**
 * The SQLite statement cache (platform/db/database.ts): a statement is prepared
 * once per SQL text, the cache is bounded (least recently used out first), and a
 * cached statement still answers correctly after the schema changes under it.
 */
import SqliteDatabase from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { withStatementCache } from '../../src/platform/db/database.js';

describe('statement cache', () => {
  it('prepares a SQL text once and hands back the same statement', () => {
    const conn = new SqliteDatabase(':memory:');
    let prepared = 0;
    const counting = new Proxy(conn, {
      get: (t, k) =>
        k === 'prepare'
          ? (s: string) => {
              prepared++;
              return t.prepare(s);
            }
          : (t as any)[k],
    });
    const cached = withStatementCache(counting as SqliteDatabase.Database);
    const a = cached.prepare('select 1 as x');
    const b = cached.prepare('select 1 as x');
    expect(b).toBe(a);
    expect(prepared).toBe(1);
    expect(b.all()).toEqual([{ x: 1 }]);
    cached.close();
  });

  it('keeps at most `max` statements, dropping the least recently used', () => {
    const conn = new SqliteDatabase(':memory:');
    const cached = withStatementCache(conn, 2);
    const one = cached.prepare('select 1');
    cached.prepare('select 2');
    cached.prepare('select 1'); // 1 is now the most recent
    cached.prepare('select 3'); // evicts 2
    expect(cached.prepare('select 1')).toBe(one);
    const two = cached.prepare('select 2');
    expect(two.all()).toEqual([{ 2: 2 }]);
    cached.close();
  });

  it('a cached statement follows a schema change', () => {
    const conn = new SqliteDatabase(':memory:');
    const cached = withStatementCache(conn);
    cached.prepare('create table t (a integer)').run();
    cached.prepare('insert into t (a) values (1)').run();
    expect(cached.prepare('select * from t').all()).toEqual([{ a: 1 }]);
    cached.prepare('alter table t add column b text').run();
    cached.prepare("update t set b = 'x'").run();
    expect(cached.prepare('select * from t').all()).toEqual([{ a: 1, b: 'x' }]);
    cached.close();
  });
});
