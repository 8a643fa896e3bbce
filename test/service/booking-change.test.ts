/**
 * The booking-change writer at service level, on the configured engine: a change
 * an actor hands it is written whole in the actor's transaction (row, slots,
 * attendees, history, outbox event with its deliveries, re-planned lifecycle
 * steps), with nothing re-read that the actor already holds, and nothing at all
 * when any part of it fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DateTime } from 'luxon';
import { startTestService, type TestService } from '../support/test-service.js';
import { appToken, applySite, idOf, type SiteIds } from '../support/fixtures.js';
import { webhookSite, ROOM_EVENTS } from '../support/webhook-site.js';
import { at, dayAhead, setClock } from '../support/catalogue.js';
import { BookingChangeWriter, type Actor, type BookingChange } from '../../src/modules/booking/booking-change.js';
import { BookingChanges } from '../../src/modules/booking/booking-changes.js';
import { MeetingRepository } from '../../src/modules/booking/meeting-repository.js';
import { TimerRepository } from '../../src/modules/lifecycle/timer-repository.js';
import { TimerScheduler } from '../../src/modules/lifecycle/scheduling.js';

const TESTER: Actor = { by: 'tester', source: 'partner', sourceDetail: 'writer-suite' };
const HOUR = 3_600_000;

describe('booking-change writer', () => {
  let svc: TestService;
  let ids: SiteIds;
  let D: DateTime;
  let token: string;
  let seen: string[] | null = null;

  beforeAll(async () => {
    svc = await startTestService({ noWorkers: true, onQuery: (q) => seen?.push(q) });
    ids = await applySite(
      svc,
      webhookSite({
        rooms: [
          { key: 'ra', name: 'Room A' },
          { key: 'rb', name: 'Room B' },
        ],
        hooks: [{ key: 'all', url: 'http://127.0.0.1:9/hook', events: ROOM_EVENTS }],
      }),
    );
    D = await dayAhead(svc, 'Asia/Bangkok', 2);
    await setClock(svc, at(D, '06:00'));
    token = (await appToken(svc)).access_token;
  });
  afterAll(async () => {
    await svc?.close();
  });

  const db = () => svc.services.storage.db;
  async function book(room: string, from: string, to: string): Promise<string> {
    const res = await svc.request('POST', '/meetings', {
      token,
      body: { meetingRoomId: idOf(ids, room), title: `${room} ${from}`, startDateTime: at(D, from), endDateTime: at(D, to) },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.data._id;
  }
  const rows = async (meetingId: string) => ({
    meeting: await db().selectFrom('meetings').selectAll().where('id', '=', meetingId).executeTakeFirstOrThrow(),
    slots: await db().selectFrom('meeting_slots').selectAll().where('meeting_id', '=', meetingId).execute(),
    histories: await db().selectFrom('meeting_histories').selectAll().where('meeting_id', '=', meetingId).orderBy('seq').execute(),
    events: await db().selectFrom('events').selectAll().where('meeting_id', '=', meetingId).orderBy('occurred_at').orderBy('id').execute(),
    deliveries: await db()
      .selectFrom('deliveries')
      .innerJoin('events', 'events.id', 'deliveries.event_id')
      .select(['deliveries.type', 'deliveries.body'])
      .where('events.meeting_id', '=', meetingId)
      .execute(),
    timers: await db().selectFrom('timers').selectAll().where('meeting_id', '=', meetingId).execute(),
  });

  it('writes a move whole: row, slot, history with its actor, MODIFY event with deliveries, re-planned steps', async () => {
    const id = await book('ra', '09:00', '10:00');
    const before = await rows(id);
    const oldStart = before.meeting.start_at;
    const w = { start: oldStart + 2 * HOUR, end: oldStart + 3 * HOUR };
    const now = svc.services.clock.now();
    const after = await svc.services.bookings.change(id, ({ write }) =>
      write({
        at: now,
        set: { title: 'moved by the writer', start_at: w.start, end_at: w.end, booked_end_at: w.end, span_end_at: w.end, updated_at: now },
        slots: { replace: w },
        history: { action: 'update', actor: TESTER, oldStart, oldEnd: before.meeting.end_at, newStart: w.start, newEnd: w.end },
        event: { window: w, detail: { kind: 'MODIFY', oldStart, oldEnd: before.meeting.end_at } },
        timers: { window: w },
      }),
    );
    expect(after?.title).toBe('moved by the writer');

    const r = await rows(id);
    expect(r.meeting).toMatchObject({ title: 'moved by the writer', start_at: w.start, end_at: w.end, updated_at: now });
    expect(r.slots.map((s) => [s.id, s.start_at, s.end_at])).toEqual([[id, w.start, w.end]]);
    expect(r.histories.map((h) => [h.seq, h.action, h.by, h.source, h.source_detail, h.status_before])).toEqual([
      [1, 'create', expect.any(String), 'partner', expect.any(String), null],
      [2, 'update', 'tester', 'partner', 'writer-suite', 'active'],
    ]);
    expect(r.histories[1]).toMatchObject({ old_start_at: oldStart, new_start_at: w.start, new_end_at: w.end });
    expect(r.events.map((e) => e.type)).toEqual(['ROOM_BOOK', 'ROOM_MODIFY']);
    const modify = JSON.parse(r.events[1].data);
    expect(modify).toMatchObject({ roomName: 'Room A', floorName: '12F' });
    expect(r.deliveries.map((d) => d.type).sort()).toEqual(['ROOM_BOOK', 'ROOM_MODIFY']);
    // The old window's steps are cancelled; the new window's are pending.
    const pending = r.timers.filter((t) => t.status === 'pending');
    expect(pending.length).toBeGreaterThan(0);
    expect(pending.every((t) => t.window_start === w.start && t.window_end === w.end)).toBe(true);
    expect(r.timers.filter((t) => t.window_start === oldStart).every((t) => t.status === 'cancelled')).toBe(true);

    // A third party sees the change, attributed to its actor.
    const res = await svc.request('GET', `/meetings/${id}`, { token });
    expect(res.status).toBe(200);
    expect(res.body.data.histories.at(-1)).toMatchObject({ action: 'update', by: 'tester', sourceDetail: 'writer-suite' });
  });

  it('re-reads nothing it was handed: inside the transaction only the booking itself is read', async () => {
    const id = await book('rb', '11:00', '12:00');
    const now = svc.services.clock.now();
    seen = [];
    try {
      await svc.services.bookings.change(id, ({ write }) =>
        write({
          at: now,
          set: { status: 'cancelled', updated_at: now },
          slots: { release: true },
          history: { action: 'cancel', actor: TESTER },
          event: { window: { start: now + HOUR, end: now + 2 * HOUR }, detail: { kind: 'CANCEL' } },
          timers: { window: null },
        }),
      );
    } finally {
      const statements = seen;
      seen = null;
      const begin = statements.findIndex((q) => /^\s*begin/i.test(q) || /^\s*start transaction/i.test(q));
      const inside = statements.slice(
        begin + 1,
        statements.findIndex((q) => /^\s*commit/i.test(q)),
      );
      expect(begin).toBeGreaterThanOrEqual(0);
      const reads = inside.filter((q) => /^\s*select/i.test(q));
      // The asset lock (PostgreSQL), the booking, and the listeners to queue deliveries for: no asset, project or floor.
      expect(reads.filter((q) => /from "(rooms|desks|projects|floors)"/.test(q) && !/for update/i.test(q))).toEqual([]);
      expect(reads.filter((q) => /from "meetings"/.test(q))).toHaveLength(1);
    }
    const r = await rows(id);
    expect(r.meeting.status).toBe('cancelled');
    expect(r.slots).toEqual([]);
    expect(r.timers.filter((t) => t.status === 'pending')).toEqual([]);
    expect(r.events.map((e) => e.type)).toEqual(['ROOM_BOOK', 'ROOM_CANCEL']);
  });

  it('writes nothing when any part of the change fails (the outbox here)', async () => {
    const id = await book('rb', '14:00', '15:00');
    const before = await rows(id);
    const storage = svc.services.storage;
    const meetings = new MeetingRepository(storage.db);
    const failingOutbox = {
      emit: async () => {
        throw new Error('outbox down');
      },
      prefetch: async () => {},
    };
    const writer = new BookingChangeWriter({
      meetings,
      events: failingOutbox,
      lifecycle: new TimerScheduler(new TimerRepository(storage.db)),
    });
    const changes = new BookingChanges({ db: storage.db, engine: storage.engine, meetings, writer, catalogue: svc.services.catalogue });
    const now = svc.services.clock.now();
    const cancel: BookingChange = {
      at: now,
      set: { status: 'cancelled', updated_at: now },
      slots: { release: true },
      history: { action: 'cancel', actor: TESTER },
      event: { window: { start: before.meeting.start_at, end: before.meeting.end_at }, detail: { kind: 'CANCEL' } },
      timers: { window: null },
    };
    await expect(changes.change(id, ({ write }) => write(cancel))).rejects.toThrow('outbox down');
    expect(await rows(id)).toEqual(before);
  });

  it('an actor that decides nothing changes nothing; a missing booking is reported as undefined', async () => {
    const id = await book('ra', '16:00', '17:00');
    const before = await rows(id);
    expect(await svc.services.bookings.change(id, async ({ meeting }) => meeting.status)).toBe('active');
    expect(await rows(id)).toEqual(before);
    expect(await svc.services.bookings.change('ffffffffffffffffffffffff', async () => 'ran')).toBeUndefined();
  });
});
