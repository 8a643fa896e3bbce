import { describe, expect, it } from 'vitest';
import { statementKind } from '../../src/platform/observability/statement-kind.js';

describe('statementKind', () => {
  it('names a statement by its verb, whatever its case, leading space, parentheses or comments', () => {
    expect(statementKind('select 1')).toBe('select');
    expect(statementKind('  INSERT INTO t values (1)')).toBe('insert');
    expect(statementKind('update "t" set a = 1')).toBe('update');
    expect(statementKind('delete from t')).toBe('delete');
    expect(statementKind('(select 1) union (select 2)')).toBe('select');
    expect(statementKind('/* c */ -- x\n select 1')).toBe('select');
    expect(statementKind('begin')).toBe('other');
    expect(statementKind('pragma foreign_keys = on')).toBe('other');
  });

  it('classifies a WITH statement by its main verb, not by the verbs inside its CTEs', () => {
    expect(
      statementKind("with l as (select wid from x), c as (select id from d where q = 'update') update deliveries set a = 1 from c"),
    ).toBe('update');
    expect(statementKind('WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r')).toBe('select');
    expect(statementKind('with gone as (delete from t returning id) insert into log select id from gone')).toBe('insert');
    expect(statementKind('with selected_rows as (select 1) delete from t')).toBe('delete');
    expect(statementKind('with x as (select 1)')).toBe('other');
  });
});
