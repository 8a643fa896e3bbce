/**
 * Query-string conveniences applied before validation: array parameters accept
 * repeated keys and comma-separated lists, and a date-time whose `+` offset
 * arrived unencoded (decoded as a space) is repaired.
 */
import type { FastifyRequest } from 'fastify';

const BROKEN_OFFSET = /^(\d{4}-\d{2}-\d{2}T[\d:.]+) (\d{2}:?\d{2})$/;

export function normalizeQuery(arrayKeys: readonly string[], dateTimeKeys: readonly string[] = []) {
  return async (req: FastifyRequest): Promise<void> => {
    const q = req.query as Record<string, unknown>;
    if (!q || typeof q !== 'object') return;
    for (const key of arrayKeys) {
      const value = q[key];
      if (value === undefined) continue;
      const list = (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(','));
      q[key] = list.map((v) => v.trim()).filter((v) => v !== '');
    }
    for (const key of dateTimeKeys) {
      const value = q[key];
      if (typeof value === 'string') q[key] = value.replace(BROKEN_OFFSET, '$1+$2');
    }
  };
}
