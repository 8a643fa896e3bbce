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

/**
 * One read-modify-write of a device's cursor at a time per device, in this process. A terminal's poll reads
 * the cursor, awaits other reads and writes it back whole; without this, an inventory asked for meanwhile (a
 * reconcile, another request of the terminal) was overwritten and only asked again at the next handshake or
 * reconcile. Between instances the cursor is still read-then-write (docs/devices.md).
 */
export class CursorLocks {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(deviceId: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(deviceId) ?? Promise.resolve();
    const result = before.then(work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(deviceId, tail);
    void tail.then(() => {
      if (this.tails.get(deviceId) === tail) this.tails.delete(deviceId);
    });
    return result;
  }
}
