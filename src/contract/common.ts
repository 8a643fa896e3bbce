/** Schema pieces shared by several routes. */
import { Type, type Static } from 'typebox';

/** Entity ids: 24 lowercase hex characters (the layout of a MongoDB ObjectId). */
export const OBJECT_ID_PATTERN = '^[0-9a-f]{24}$';

export const ObjectId = (description?: string) => Type.String({ pattern: OBJECT_ID_PATTERN, ...(description ? { description } : {}) });

export const DateTime = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });

/** An absolute http or https URL (scheme in any case, no whitespace): the only addresses a browser is sent to. */
export const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$';

export const IdParams = Type.Object({ id: ObjectId('24-character hexadecimal id') });
export type IdParams = Static<typeof IdParams>;

/**
 * The largest `offset` of a paginated list: any integer a JSON number carries exactly
 * (2^53-1). Both engines take it (SQLite's OFFSET and PostgreSQL's bigint are 64-bit);
 * past the data the page is empty.
 */
export const MAX_OFFSET = Number.MAX_SAFE_INTEGER;

export const Pagination = {
  limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 3000, description: 'Page size, 0-3000 (default 100)' })),
  offset: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_OFFSET,
      description: 'Items to skip, 0 or more (default 0; at most 2^53-1); past the data the page is empty',
    }),
  ),
};

/** A querystring of paging only. */
export const PageQuery = Type.Object({ ...Pagination });
export type PageQuery = Static<typeof PageQuery>;

/** Data of the liveness and readiness probes. */
export const HealthStatus = Type.Object({ status: Type.String() });
export type HealthStatus = Static<typeof HealthStatus>;
