import { describe, expect, it } from 'vitest';
import { formatValidationErrors, toErrorResponse } from '../../src/platform/http/error-mapping.js';
import { ServiceError } from '../../src/platform/errors.js';
import { INSTANT_TEXT } from '../../src/platform/time/instant.js';

describe('validation messages', () => {
  it('gives one readable message per violated constraint', () => {
    const messages = formatValidationErrors(
      [
        {
          instancePath: '',
          keyword: 'required',
          params: { missingProperty: 'projectId' },
          message: "must have required property 'projectId'",
        },
        { instancePath: '/limit', keyword: 'maximum', params: { limit: 3000 }, message: 'must be <= 3000' },
        { instancePath: '/startDateTime', keyword: 'format', params: { format: 'date-time' }, message: 'must match format "date-time"' },
        {
          instancePath: '/items/0/type',
          keyword: 'enum',
          params: { allowedValues: ['a', 'b'] },
          message: 'must be equal to one of the allowed values',
        },
      ],
      'querystring',
    );
    expect(messages).toEqual([
      'query.projectId is required',
      'query.limit must be <= 3000',
      `query.startDateTime must be ${INSTANT_TEXT}`,
      'query.items[0].type must be one of: a, b',
    ]);
  });

  it('collapses a bad value of a union of literals (anyOf of const) into one message', () => {
    const branch = (i: number, value: string) => ({
      instancePath: '/type',
      schemaPath: `#/properties/type/anyOf/${i}/const`,
      keyword: 'const',
      params: { allowedValue: value },
      message: 'must be equal to constant',
    });
    const messages = formatValidationErrors(
      [
        branch(0, 'normal'),
        branch(1, 'bedroom'),
        {
          instancePath: '/type',
          schemaPath: '#/properties/type/anyOf',
          keyword: 'anyOf',
          params: {},
          message: 'must match a schema in anyOf',
        },
        {
          instancePath: '/limit',
          schemaPath: '#/properties/limit/maximum',
          keyword: 'maximum',
          params: { limit: 3000 },
          message: 'must be <= 3000',
        },
      ] as never,
      'querystring',
    );
    expect(messages).toEqual(['query.type must be one of: normal, bedroom', 'query.limit must be <= 3000']);
  });

  it('collapses each bad item of an array of literals separately, and keeps a non-literal anyOf as it is', () => {
    const item = (i: number) => [
      {
        instancePath: `/statuses/${i}`,
        schemaPath: '#/properties/statuses/items/anyOf/0/const',
        keyword: 'const',
        params: { allowedValue: 'active' },
      },
      {
        instancePath: `/statuses/${i}`,
        schemaPath: '#/properties/statuses/items/anyOf/1/const',
        keyword: 'const',
        params: { allowedValue: 'cancelled' },
      },
      {
        instancePath: `/statuses/${i}`,
        schemaPath: '#/properties/statuses/items/anyOf',
        keyword: 'anyOf',
        params: {},
        message: 'must match a schema in anyOf',
      },
    ];
    const other = [
      { instancePath: '/when', schemaPath: '#/properties/when/anyOf/0/format', keyword: 'format', params: { format: 'date-time' } },
      {
        instancePath: '/when',
        schemaPath: '#/properties/when/anyOf/1/type',
        keyword: 'type',
        params: { type: 'null' },
        message: 'must be null',
      },
      {
        instancePath: '/when',
        schemaPath: '#/properties/when/anyOf',
        keyword: 'anyOf',
        params: {},
        message: 'must match a schema in anyOf',
      },
    ];
    const messages = formatValidationErrors([...item(0), ...item(2), ...other] as never, 'body');
    expect(messages.slice(0, 2)).toEqual([
      'body.statuses[0] must be one of: active, cancelled',
      'body.statuses[2] must be one of: active, cancelled',
    ]);
    expect(messages.slice(2)).toHaveLength(3);
  });

  it('names a non-finite or fractional number plainly', () => {
    expect(
      formatValidationErrors(
        [
          { instancePath: '/advanceMinutes', keyword: 'type', params: { type: 'number' }, message: 'must be number' },
          { instancePath: '/limit', keyword: 'type', params: { type: 'integer' }, message: 'must be integer' },
        ],
        'body',
      ),
    ).toEqual(['body.advanceMinutes must be a finite number', 'body.limit must be a whole number']);
  });

  it('maps service errors to their status and code', () => {
    const res = toErrorResponse(new ServiceError(409, 'KS012', 'taken'));
    expect(res).toMatchObject({ status: 409, body: { code: 'KS012', success: false, message: 'taken' } });
  });

  it('never leaks an unexpected error', () => {
    const res = toErrorResponse(new Error('password=hunter2 at /src/x.ts:1'));
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
    expect(res.body.code).toBe('KS004');
  });

  it('treats an unreachable database as 503 KS004', () => {
    const err = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(toErrorResponse(err)).toMatchObject({ status: 503, body: { code: 'KS004' } });
  });
});
