/** What the service keeps per ZKTeco device between its polls (device_state.pull_cursor, JSON). */
import type { Fields } from '../rules/zkteco-protocol.js';

export interface ZkCursor {
  /** The upload stamps the device last sent, per table (rtlog, ATTLOG, OPERLOG). */
  stamps: Record<string, string>;
  /** The last inventory round asked. */
  round?: number;
  /** An inventory asked for: sent at (real ms, null until the device fetched it) and the rows received per table. */
  inventory?: { round: number; sentAt: number | null; tables: Record<string, { rows: Fields[]; done: boolean }> };
  /** Commands handed to the device and not yet answered in full: seq → when, how many parts, the answers so far. */
  sent: Record<string, { at: number; parts: number; results: Record<string, number> }>;
}

export function readCursor(text: string | null): ZkCursor {
  const parsed = text ? (JSON.parse(text) as Partial<ZkCursor>) : {};
  return { ...parsed, stamps: parsed.stamps ?? {}, sent: parsed.sent ?? {} };
}

/** Asks for the device's user list at its next poll (a round already asked and not yet answered stays). */
export function askInventory(cursor: ZkCursor): void {
  if (!cursor.inventory) cursor.inventory = { round: (cursor.round ?? 0) + 1, sentAt: null, tables: {} };
  cursor.round = cursor.inventory.round;
}
