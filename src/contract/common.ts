/** Schema pieces shared by several routes. */
import { Type } from 'typebox';
import { OBJECT_ID_PATTERN } from '../platform/ids.js';

export const ObjectId = (description?: string) =>
  Type.String({ pattern: OBJECT_ID_PATTERN, ...(description ? { description } : {}) });

export const DateTime = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) });

export const IdParams = Type.Object({ id: ObjectId('24-character hexadecimal id') });

export const Pagination = {
  limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 3000, description: 'Page size, 0-3000 (default 100)' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Items to skip (default 0)' })),
};
