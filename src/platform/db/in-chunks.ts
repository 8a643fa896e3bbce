/**
 * Rows per multi-row statement and values per `where … in (…)` list: well under SQLite's and PostgreSQL's
 * parameter limits.
 */
export const IN_CHUNK = 500;

/** `items` in order, in chunks of at most `size`. */
export function chunked<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The distinct values in order of first appearance, in chunks of at most `size` (for IN lists). */
export function inChunks<T>(values: Iterable<T>, size = IN_CHUNK): T[][] {
  return chunked([...new Set(values)], size);
}

/** The rows `read` returns for each chunk of the distinct `values` (one statement per IN_CHUNK values), in one list. */
export async function readInChunks<V, R>(values: Iterable<V>, read: (chunk: V[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (const chunk of inChunks(values)) out.push(...(await read(chunk)));
  return out;
}
