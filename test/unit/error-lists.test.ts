/** Capped KS001 lists and the early stop of validation (platform/http: error-mapping.ts, validation.ts). */
import { describe, expect, it } from 'vitest';
import { capMessages, formatValidationErrors } from '../../src/platform/http/error-mapping.js';
import { exceedsNodes, TRUNCATED_KEYWORD } from '../../src/platform/http/validation.js';

describe('capMessages', () => {
  it('keeps up to 100 messages as they are, then the first 100 and a count', () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => `m${i}`);
    expect(capMessages(list(100))).toEqual(list(100));
    expect(capMessages(list(101))).toEqual([...list(100), '… and 1 more']);
    expect(capMessages(list(200_000))).toEqual([...list(100), '… and 199900 more']);
    expect(capMessages(['a'], true)).toEqual(['a', '… and possibly more problems: the request is too large to list them all']);
  });

  it('a truncated validation result says so', () => {
    const errs = [
      { instancePath: '', keyword: 'additionalProperties', params: { additionalProperty: 'x' } },
      { instancePath: '', keyword: TRUNCATED_KEYWORD, params: {} },
    ];
    expect(formatValidationErrors(errs, 'body')).toEqual(['body.x is not an allowed field', expect.stringMatching(/^… and possibly more/)]);
  });
});

describe('exceedsNodes', () => {
  it('counts entries and elements at every level, stopping past the bound', () => {
    expect(exceedsNodes({ a: [1, 2], b: { c: 3 } }, 5)).toBe(false);
    expect(exceedsNodes({ a: [1, 2], b: { c: 3 } }, 4)).toBe(true);
    expect(exceedsNodes('text', 0)).toBe(false);
    expect(exceedsNodes(new Array(1_000_000).fill([1]), 10)).toBe(true);
  });
});
