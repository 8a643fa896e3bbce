/** The shared request-body walker (platform/http/nul-guard.ts: findFirst). */
import { describe, expect, it } from 'vitest';
import { findFirst } from '../../src/platform/http/nul-guard.js';

const isNul = (v: unknown) => typeof v === 'string' && v.includes('\u0000');

describe('findFirst', () => {
  it('names the path of the first bad value, keys and indices included', () => {
    const body = { a: [1, { b: 'ok', c: ['x', 'bad\u0000'] }], d: 'bad\u0000' };
    expect(findFirst(body, 'body', isNul)).toEqual({ path: 'body.a[1].c[1]', tooDeep: false });
    expect(findFirst({ ok: [1, 2], 'k\u0000': 1 }, 'body', isNul)).toEqual({ path: 'body', tooDeep: false });
    expect(findFirst({ x: { 'k\u0000': 1 } }, 'body', isNul)).toEqual({ path: 'body.x', tooDeep: false });
    expect(findFirst('\u0000', 'query', isNul)).toEqual({ path: 'query', tooDeep: false });
    expect(findFirst({ a: [[], {}, [{ b: 2 }]] }, 'body', isNul)).toBeUndefined();
    expect(findFirst(null, 'body', isNul)).toBeUndefined();
  });

  it('refuses nesting past maxDepth, naming the first container too deep', () => {
    const nest = (n: number): unknown => (n === 0 ? 1 : [nest(n - 1)]);
    expect(findFirst({ a: nest(3) }, 'body', isNul, 4)).toBeUndefined();
    expect(findFirst({ a: nest(4) }, 'body', isNul, 4)).toEqual({ path: 'body.a[0][0][0]', tooDeep: true });
    // Deep beyond any call stack: iterative.
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(findFirst(deep, 'body', isNul)).toBeUndefined();
    expect(findFirst(deep, 'body', isNul, 32)?.tooDeep).toBe(true);
  });

  it('visits siblings after a deep branch, in document order', () => {
    const body = { a: { b: { c: [1, 2] } }, e: ['\u0000'] };
    expect(findFirst(body, 'body', isNul)?.path).toBe('body.e[0]');
    const order: unknown[] = [];
    findFirst({ a: [1, [2, 3]], b: 4 }, 'body', (v) => (typeof v === 'number' && order.push(v), false));
    expect(order).toEqual([1, 2, 3, 4]);
  });

  it('walks a multi-million element array in one cheap pass', () => {
    const big = new Array<number>(3_000_000).fill(0);
    const started = performance.now();
    expect(findFirst(big, 'body', isNul, 32)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
