/**
 * Formats the request validator checks, replacing ajv-formats' where ours is
 * stricter: `date-time` is the service's one instant grammar (platform/time/instant.ts),
 * so a value that passes validation always parses.
 */
import { isInstant } from '../time/instant.js';

interface FormatRegistry {
  addFormat(name: string, format: { type: 'string'; validate: (value: string) => boolean }): unknown;
}

/** Fastify's `ajv.onCreate`: runs after ajv-formats, so these definitions win. */
export function registerStrictFormats(ajv: FormatRegistry): void {
  ajv.addFormat('date-time', { type: 'string', validate: isInstant });
}
