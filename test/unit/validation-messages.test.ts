import { describe, expect, it } from 'vitest';
import { formatValidationErrors, toErrorResponse } from '../../src/platform/http/error-mapping.js';
import { ServiceError } from '../../src/platform/errors.js';

describe('validation messages', () => {
  it('gives one readable message per violated constraint', () => {
    const messages = formatValidationErrors(
      [
        { instancePath: '', keyword: 'required', params: { missingProperty: 'projectId' }, message: "must have required property 'projectId'" },
        { instancePath: '/limit', keyword: 'maximum', params: { limit: 3000 }, message: 'must be <= 3000' },
        { instancePath: '/startDateTime', keyword: 'format', params: { format: 'date-time' }, message: 'must match format "date-time"' },
        { instancePath: '/items/0/type', keyword: 'enum', params: { allowedValues: ['a', 'b'] }, message: 'must be equal to one of the allowed values' },
      ],
      'querystring',
    );
    expect(messages).toEqual([
      'query.projectId is required',
      'query.limit must be <= 3000',
      'query.startDateTime must be an ISO 8601 date-time with a timezone offset',
      'query.items[0].type must be one of: a, b',
    ]);
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
