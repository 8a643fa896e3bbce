/**
 * Pure pieces of the set-based site apply and the SQLite busy retry: how rows are
 * cut into multi-row statements, and the retry backoff.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PARAMETERS, MAX_ROWS_PER_STATEMENT, sameColumnChunks } from '../../src/modules/site/site-repository.js';
import { busyBackoffMs } from '../../src/platform/db/sqlite-busy.js';

describe('sameColumnChunks', () => {
  it('keeps rows with different columns apart and every row exactly once', () => {
    const rows = [
      { id: 'a', x: 1 },
      { id: 'b', x: 2, y: 3 },
      { x: 4, id: 'c' },
      { id: 'd', y: 5, x: 6 },
    ];
    const chunks = sameColumnChunks(rows);
    for (const chunk of chunks) {
      const sig = Object.keys(chunk[0]).sort().join();
      for (const r of chunk) expect(Object.keys(r).sort().join()).toBe(sig);
    }
    expect(
      chunks
        .flat()
        .map((r) => r.id)
        .sort(),
    ).toEqual(['a', 'b', 'c', 'd']);
  });

  it('caps rows per statement and values per statement', () => {
    const narrow = Array.from({ length: 1001 }, (_, i) => ({ id: String(i), a: i }));
    const chunks = sameColumnChunks(narrow);
    expect(chunks.every((c) => c.length <= MAX_ROWS_PER_STATEMENT)).toBe(true);
    expect(chunks.reduce((n, c) => n + c.length, 0)).toBe(1001);
    const wideRow = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`c${i}`, i]));
    const wide = sameColumnChunks(Array.from({ length: 100 }, () => ({ ...wideRow })));
    expect(wide.every((c) => c.length * 1000 <= MAX_PARAMETERS)).toBe(true);
    expect(wide.reduce((n, c) => n + c.length, 0)).toBe(100);
  });
});

describe('SQLite busy backoff', () => {
  it('starts at 5 ms, doubles, and stays at 100 ms', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 20].map(busyBackoffMs)).toEqual([5, 10, 20, 40, 80, 100, 100, 100]);
  });
});
