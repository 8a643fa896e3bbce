/**
 * Exactly-once checks shared by the crash and multi-instance lifecycle tests:
 * reads the timers, events, deliveries and histories of a set of bookings
 * straight from the database, and matches what a loopback receiver got against
 * the deliveries the service recorded.
 */
import { expect } from 'vitest';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/platform/db/schema.js';
import { expectedSignature, header, type ReceivedRequest } from './webhook-receiver.js';

export interface DbSnapshot {
  timers: { id: string; meeting_id: string; kind: string; status: string; due_at: number }[];
  events: { id: string; meeting_id: string | null; type: string; occurred_at: number }[];
  deliveries: {
    id: string;
    event_id: string;
    webhook_id: string;
    type: string;
    status: string;
    attempts: number;
    body: string;
    claimed_until: number | null;
  }[];
  histories: { meeting_id: string; action: string; source: string; reason: string | null; seq: number }[];
}

export async function snapshot(db: Kysely<Database>, meetingIds: string[]): Promise<DbSnapshot> {
  const timers = await db
    .selectFrom('timers')
    .select(['id', 'meeting_id', 'kind', 'status', 'due_at'])
    .where('meeting_id', 'in', meetingIds)
    .execute();
  const events = await db
    .selectFrom('events')
    .select(['id', 'meeting_id', 'type', 'occurred_at'])
    .where('meeting_id', 'in', meetingIds)
    .execute();
  const deliveries = await db
    .selectFrom('deliveries')
    .select(['id', 'event_id', 'webhook_id', 'type', 'status', 'attempts', 'body', 'claimed_until'])
    .where('event_id', 'in', events.length ? events.map((e) => e.id) : ['-'])
    .execute();
  const histories = await db
    .selectFrom('meeting_histories')
    .select(['meeting_id', 'action', 'source', 'reason', 'seq'])
    .where('meeting_id', 'in', meetingIds)
    .orderBy('meeting_id')
    .orderBy('seq')
    .execute();
  return { timers, events, deliveries, histories };
}

/** `{key: count}` of an array. */
export function countBy<T>(items: T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[key(i)] = (out[key(i)] ?? 0) + 1;
  return out;
}

/**
 * Every booking has exactly the expected events (one of each type, nothing else),
 * and every event exactly one delivery per listener.
 */
export function expectEventsExactlyOnce(s: DbSnapshot, meetingIds: string[], expectedTypes: string[], webhookIds: string[]): void {
  const perMeeting = new Map<string, string[]>();
  for (const e of s.events) perMeeting.set(e.meeting_id!, [...(perMeeting.get(e.meeting_id!) ?? []), e.type]);
  for (const id of meetingIds) {
    expect((perMeeting.get(id) ?? []).sort(), `events of booking ${id}`).toEqual([...expectedTypes].sort());
  }
  const perEventHook = countBy(s.deliveries, (d) => `${d.event_id}/${d.webhook_id}`);
  for (const e of s.events) {
    for (const w of webhookIds) expect(perEventHook[`${e.id}/${w}`] ?? 0, `deliveries of event ${e.type} ${e.id} to ${w}`).toBe(1);
  }
  expect(s.deliveries.length).toBe(s.events.length * webhookIds.length);
}

export interface ReceiptAudit {
  /** Distinct delivery ids the receiver accepted (answered 2xx). */
  accepted: Set<string>;
  /** Delivery ids accepted more than once (allowed only where the caller says so). */
  duplicates: { id: string; receipts: ReceivedRequest[] }[];
}

/**
 * Checks what one listener path received against the recorded deliveries of
 * that listener: every request is signed with the listener's secret over the
 * exact bytes, the header id equals the body id, every receipt of one id carries
 * byte-identical bodies (one delivery id = one event), and the set of accepted
 * ids is exactly the set of deliveries (all marked delivered).
 */
export function auditReceipts(received: ReceivedRequest[], s: DbSnapshot, webhookId: string, secret: string): ReceiptAudit {
  const rows = new Map(s.deliveries.filter((d) => d.webhook_id === webhookId).map((d) => [d.id, d]));
  const byId = new Map<string, ReceivedRequest[]>();
  for (const r of received) {
    const id = header(r, 'x-service-delivery')!;
    expect(r.body?.id, 'body id = X-Service-Delivery').toBe(id);
    expect(header(r, 'x-service-event')).toBe(r.body?.type);
    expect(header(r, 'x-service-signature'), `signature of ${id}`).toBe(
      expectedSignature(secret, header(r, 'x-service-timestamp')!, r.raw),
    );
    const row = rows.get(id);
    expect(row, `received delivery ${id} (${r.body?.type}) is a recorded delivery of this listener`).toBeDefined();
    expect(r.raw.toString('utf8'), `body of ${id} is the recorded body`).toBe(row!.body);
    byId.set(id, [...(byId.get(id) ?? []), r]);
  }
  const accepted = new Set<string>();
  const duplicates: ReceiptAudit['duplicates'] = [];
  for (const [id, receipts] of byId) {
    const ok = receipts.filter((r) => typeof r.answered === 'number' && r.answered >= 200 && r.answered < 300);
    if (ok.length) accepted.add(id);
    if (ok.length > 1) duplicates.push({ id, receipts: ok });
  }
  const delivered = [...rows.values()]
    .filter((d) => d.status === 'delivered')
    .map((d) => d.id)
    .sort();
  expect(
    [...rows.values()].filter((d) => d.status !== 'delivered').map((d) => `${d.id} ${d.type} ${d.status} attempts=${d.attempts}`),
    'deliveries not delivered',
  ).toEqual([]);
  expect([...accepted].sort(), 'accepted delivery ids = recorded deliveries').toEqual(delivered);
  return { accepted, duplicates };
}

export const until = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs: number, stepMs = 50): Promise<void> => {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
};
