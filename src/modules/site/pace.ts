/**
 * Keeps a large site apply from stalling other requests: the apply's loops call a
 * pacer once per entity, and every `every` calls it waits one event-loop turn, so
 * requests that arrived meanwhile are answered between chunks. It changes no
 * order and no result (the transaction stays one transaction).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Entities handled between two turns of the event loop. */
export const PACE_EVERY = 100;

export type Pacer = () => Promise<void>;

export function pacer(every: number = PACE_EVERY): Pacer {
  let calls = 0;
  return async () => {
    calls += 1;
    if (calls % every === 0) await nextTurn();
  };
}

/** `items.flatMap(each)`, yielding to the event loop every `PACE_EVERY` items. */
export async function flatMapPaced<T, U>(items: readonly T[], each: (item: T, index: number) => U[], pace: Pacer = pacer()): Promise<U[]> {
  const out: U[] = [];
  for (let i = 0; i < items.length; i++) {
    await pace();
    out.push(...each(items[i]!, i));
  }
  return out;
}
