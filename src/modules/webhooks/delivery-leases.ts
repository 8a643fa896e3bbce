/**
 * The deliveries one worker has leased and not finished, per listener: those in
 * flight, and those leased ahead (up to `depth` in all per listener) so the next
 * attempts start from memory, without a due read, as slots free up. Whatever is
 * leased comes with its body (the statement that leases it reads it), and its
 * lease outlasts an attempt by a margin, so rows of a crashed worker are leased
 * again by others once it runs out.
 */
import type { DeliveryItem } from './delivery-repository.js';

export class DeliveryLeases {
  /** Leased by this worker and not over (ahead or in flight), per listener. */
  private readonly held = new Map<string, number>();
  /** In flight here, per listener. */
  private readonly running = new Map<string, number>();
  /** Leased and not started, by id, in the order leased (each read's rows in sending order). */
  private readonly ahead = new Map<string, DeliveryItem>();
  /** Attempts over so far (room made). */
  freed = 0;

  constructor(
    /** Attempts in flight per listener at most (the runner's per-key budget). */
    private readonly budget: number,
    /** Leased per listener at most: in flight and ahead. */
    readonly depth: number,
  ) {}

  /** Whether any attempt is in flight here. */
  get busy(): boolean {
    return this.running.size > 0;
  }

  /** How many more rows of each listener a due read may lease (listeners not named: `depth`); `ending`: attempts being recorded, over once it is. */
  room(ending: readonly DeliveryItem[] = []): Record<string, number> {
    const room: Record<string, number> = {};
    for (const [webhookId, n] of this.held) room[webhookId] = this.depth - n;
    for (const d of ending) room[d.webhook_id] = (room[d.webhook_id] ?? this.depth) + 1;
    for (const webhookId in room) room[webhookId] = Math.max(0, Math.min(this.depth, room[webhookId]!));
    return room;
  }

  /** Rows a due read leased (until `leaseUntil`, real time). */
  add(items: readonly DeliveryItem[], leaseUntil: number): void {
    for (const d of items) {
      d.leaseUntil = leaseUntil;
      this.ahead.set(d.id, d);
      bump(this.held, d.webhook_id, 1);
    }
  }

  /** Leased rows that may start now: per listener, as many as its budget has room for, in sending order. */
  startable(): DeliveryItem[] {
    if (!this.ahead.size) return [];
    const taken = new Map<string, number>();
    const out: DeliveryItem[] = [];
    for (const d of this.ahead.values()) {
      const n = (this.running.get(d.webhook_id) ?? 0) + (taken.get(d.webhook_id) ?? 0);
      if (n >= this.budget) continue;
      taken.set(d.webhook_id, (taken.get(d.webhook_id) ?? 0) + 1);
      out.push(d);
    }
    return out.sort((a, b) => a.next_attempt_at - b.next_attempt_at || a.created_at - b.created_at);
  }

  /** The runner starts `d`: false when it is not leased ahead here. */
  start(d: DeliveryItem): boolean {
    if (!this.ahead.delete(d.id)) return false;
    bump(this.running, d.webhook_id, 1);
    return true;
  }

  /** The runner starts `d`, leased by a statement of its own (not ahead). */
  adopt(d: DeliveryItem): void {
    bump(this.held, d.webhook_id, 1);
    bump(this.running, d.webhook_id, 1);
  }

  /** An attempt started here is over (recorded, or left to its lease). */
  over(d: DeliveryItem): void {
    bump(this.running, d.webhook_id, -1);
    bump(this.held, d.webhook_id, -1);
    this.freed++;
  }

  /** Takes out the rows leased ahead for `webhookId` (all listeners when omitted), to give them back. */
  drop(webhookId?: string): DeliveryItem[] {
    const out: DeliveryItem[] = [];
    for (const d of this.ahead.values()) {
      if (webhookId !== undefined && d.webhook_id !== webhookId) continue;
      this.ahead.delete(d.id);
      bump(this.held, d.webhook_id, -1);
      out.push(d);
    }
    return out;
  }
}

function bump(m: Map<string, number>, key: string, n: 1 | -1): void {
  const left = (m.get(key) ?? 0) + n;
  if (left > 0) m.set(key, left);
  else m.delete(key);
}
