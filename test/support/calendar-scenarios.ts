/**
 * The scenarios every connected calendar provider passes, driven over HTTP and
 * through the provider's stand-in like a building would: the subscription made on
 * apply, a person's invitation booking the room (and the room's answer written back),
 * moves (within and against the room's rules), a delete, a decline on the room's copy,
 * repeated and forged notifications, renewal, a lost-notification resync and an expired
 * cursor, the provider down and back, and bookings made in the API written to the room's
 * calendar, moved there by a person and moved in the service with one MODIFY event, and
 * no loop. test/http/calendar-microsoft.test.ts and calendar-google.test.ts run them and
 * add their own wire checks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CalendarStandIn, StandInEvent } from './calendar-standin.js';
import { WebhookReceiver } from './webhook-receiver.js';
import { eventKinds, paymentTestKit } from './payments.js';
import { ALL_BOOKING_EVENTS, startWebhookService, type WebhookCtx } from './webhook-site.js';
import { CALENDAR_PULL_JOB, CALENDAR_SUBSCRIPTIONS_JOB, CALENDAR_WRITEBACK_JOB } from '../../src/modules/calendar-sync/index.js';

export const ROOM_EMAILS = [
  'cal-a',
  'cal-b',
  'cal-c',
  'cal-d',
  'cal-e',
  'cal-f',
  'cal-g',
  'cal-h',
  'cal-i',
  'cal-j',
  'cal-k',
  'cal-l',
  'cal-m',
  'cal-n',
  'cal-o',
  'cal-p',
].map((k) => ({ key: k, email: `${k}@rooms.example.com` }));
export const ALICE = { email: 'alice@example.com', name: 'Alice' };

export interface CalendarScenarioCtx {
  c: WebhookCtx;
  rx: WebhookReceiver;
  standIn: CalendarStandIn;
  connectionId: string;
  /** Runs the calendar jobs (subscriptions, pulls, write-backs) until nothing more happens. */
  settle(): Promise<void>;
  /** The booking an event on the room's calendar stands for (null when none). */
  meetingOf(eventId: string): Promise<any | null>;
  /** GET /ops/v1/calendar-sync/connections/{id}: the room's entry. */
  roomView(key: string): Promise<any>;
  /** Absolute ms of local time `hhmm` on day D + plusDays. */
  ms(hhmm: string, plusDays?: number): number;
}

export async function startCalendarScenario(standIn: CalendarStandIn, connection: Record<string, unknown>): Promise<CalendarScenarioCtx> {
  const rx = await WebhookReceiver.start();
  const c = await startWebhookService({
    rooms: ROOM_EMAILS.map((r) => ({ key: r.key, name: `Room ${r.key}`, email: r.email })),
    hooks: [{ key: 'hk', url: rx.url('/events'), events: ALL_BOOKING_EVENTS }],
    calendarConnections: [
      { key: 'tower-cal', project: 'tower', apiBaseUrl: standIn.apiBaseUrl, tokenUrl: standIn.tokenUrl, ...connection },
    ],
    clockAt: '05:00',
    env: { CALENDAR_PROVIDER_TIMEOUT_MS: '3000' },
  });
  const jobs = c.svc.services.jobs;
  const connectionId = c.id('tower-cal');
  const ctx: CalendarScenarioCtx = {
    c,
    rx,
    standIn,
    connectionId,
    settle: async () => {
      for (let i = 0; i < 4; i++) {
        await standIn.settled();
        await jobs.drain(CALENDAR_SUBSCRIPTIONS_JOB);
        await jobs.drain(CALENDAR_PULL_JOB);
        await jobs.drain(CALENDAR_WRITEBACK_JOB);
      }
      await standIn.settled();
    },
    meetingOf: async (eventId) => {
      const link = await c.svc.services.storage.db
        .selectFrom('calendar_links')
        .select('meeting_id')
        .where('remote_id', '=', eventId)
        .executeTakeFirst();
      if (!link?.meeting_id) return null;
      const res = await c.svc.ops('GET', `/ops/v1/meetings/${link.meeting_id}`);
      expect(res.status, res.text).toBe(200);
      return res.body.data;
    },
    roomView: async (key) => {
      const res = await c.svc.ops('GET', `/ops/v1/calendar-sync/connections/${connectionId}`);
      expect(res.status, res.text).toBe(200);
      return res.body.data.rooms.find((r: any) => r.roomId === c.id(key));
    },
    ms: (hhmm, plusDays = 0) => Date.parse(c.t(hhmm, plusDays)),
  };
  // The site was applied before the clock was parked: subscriptions and the first full reads now.
  await ctx.settle();
  return ctx;
}

/** The shared scenarios, run once per provider. */
export function describeCalendarScenarios(
  name: string,
  make: () => Promise<{ standIn: CalendarStandIn; connection: Record<string, unknown> }>,
): void {
  describe(`${name}: connected room calendars through the provider's stand-in`, () => {
    let s: CalendarScenarioCtx;
    let room = 0;
    let day = 0;
    const nextRoom = () => ROOM_EMAILS[room++ % ROOM_EMAILS.length]!;
    const newDay = () => day++;
    const kit = () => paymentTestKit(s.c, s.rx);
    /** The booking's window as instants (the ops view writes UTC, the API the property's offset). */
    const windowOf = (m: any) => ({ start: Date.parse(m.startDateTime), end: Date.parse(m.endDateTime) });
    const at = (from: string, to: string, d: number) => ({ start: s.ms(from, d), end: s.ms(to, d) });
    const eventOn = (email: string, id: string): StandInEvent => {
      const e = s.standIn.events(email).find((x) => x.id === id);
      expect(e, `event ${id} on ${email}`).toBeDefined();
      return e!;
    };
    const invite = async (email: string, from: string, to: string, d: number, title = 'Design review') => {
      const id = await s.standIn.personCreates(email, { organizer: ALICE, title, start: s.ms(from, d), end: s.ms(to, d) });
      await s.settle();
      return id;
    };

    beforeAll(async () => {
      const { standIn, connection } = await make();
      s = await startCalendarScenario(standIn, connection);
    });
    afterAll(async () => {
      await s?.c.close();
      await s?.rx.close();
      await s?.standIn.close();
    });

    it('subscribes every room with an email on apply, and shows the subscription, sync and counts per room', async () => {
      const subs = s.standIn.subscriptions().filter((x) => x.active);
      for (const r of ROOM_EMAILS) expect(subs.map((x) => x.calendarId)).toContain(r.email);
      expect(new Set(subs.map((x) => x.notificationUrl))).toEqual(new Set([`${s.c.svc.url}/calendar/webhooks/${s.connectionId}`]));
      const view = await s.roomView(ROOM_EMAILS[0]!.key);
      const sub = subs.find((x) => x.calendarId === ROOM_EMAILS[0]!.email)!;
      expect(view).toMatchObject({ calendarId: ROOM_EMAILS[0]!.email, status: 'active', lastError: null, changesIn: 0, changesOut: 0 });
      expect(view.subscription.id).toBe(sub.id);
      expect(Math.abs(Date.parse(view.subscription.expiresAt) - sub.expiresAt)).toBeLessThan(1000);
      expect(view.lastSyncAt).not.toBeNull();
      expect(view.cursorAgeSeconds).toBeGreaterThanOrEqual(0);
      const byKey = await s.c.svc.ops('GET', '/ops/v1/calendar-sync/connections/tower-cal');
      expect(byKey.body.data.id).toBe(s.connectionId);
      expect((await s.c.svc.ops('GET', '/ops/v1/calendar-sync/connections/nope')).status).toBe(404);
    });

    it("books the room for a person's invitation and accepts it on the room's copy", async () => {
      const d = newDay();
      const r = nextRoom();
      const id = await invite(r.email, '10:00', '11:00', d);
      const m = await s.meetingOf(id);
      expect(m).toMatchObject({ status: 'active', title: 'Design review' });
      expect(windowOf(m)).toEqual(at('10:00', '11:00', d));
      expect(m.organizer.email).toBe(ALICE.email);
      expect(m.history[0].action).toBe('create');
      expect(m.history[0].source).toMatch(/google|microsoft|calendar/);
      expect(eventOn(r.email, id).roomResponse).toBe('accepted');
      expect(eventKinds(await kit().eventsOf(`Room ${r.key}`))).toEqual(['BOOK']);
      const view = await s.roomView(r.key);
      expect(view.changesIn).toBeGreaterThanOrEqual(1);
      expect(view.changesOut).toBeGreaterThanOrEqual(1);
    });

    it('moves the booking when the person moves the event; a move breaking a rule releases it with the reason, declined with it', async () => {
      const d = newDay();
      const r = nextRoom();
      const id = await invite(r.email, '10:00', '11:00', d);
      await s.standIn.personUpdates(r.email, id, { start: s.ms('13:00', d), end: s.ms('14:00', d) });
      await s.settle();
      const moved = await s.meetingOf(id);
      expect(moved.status).toBe('active');
      expect(windowOf(moved)).toEqual(at('13:00', '14:00', d));
      expect(eventKinds(await kit().eventsOf(`Room ${r.key}`))).toEqual(['BOOK', 'MODIFY']);
      // The room closes at 23:00.
      await s.standIn.personUpdates(r.email, id, { start: s.ms('22:30', d), end: s.ms('23:30', d) });
      await s.settle();
      const released = await s.meetingOf(id);
      expect(released.status).toBe('cancelled');
      expect(released.cancelReason).toMatch(/\S/);
      const e = eventOn(r.email, id);
      expect(e.roomResponse).toBe('declined');
      expect(e.roomComment).toBe(released.cancelReason);
      expect(eventKinds(await kit().eventsOf(`Room ${r.key}`))).toEqual(['BOOK', 'MODIFY', 'CANCEL']);
    });

    it('cancels the booking when the person deletes the event', async () => {
      const d = newDay();
      const r = nextRoom();
      const id = await invite(r.email, '10:00', '11:00', d);
      await s.standIn.personDeletes(r.email, id);
      await s.settle();
      expect((await s.meetingOf(id)).status).toBe('cancelled');
      expect(eventKinds(await kit().eventsOf(`Room ${r.key}`))).toEqual(['BOOK', 'CANCEL']);
    });

    it('cancels the booking when the organizer takes the room off the invitation', async () => {
      const d = newDay();
      const r = nextRoom();
      const id = await invite(r.email, '10:00', '11:00', d);
      await s.standIn.personRemovesRoom(r.email, id);
      await s.settle();
      expect((await s.meetingOf(id)).status).toBe('cancelled');
      expect(eventKinds(await kit().eventsOf(`Room ${r.key}`))).toEqual(['BOOK', 'CANCEL']);
    });

    it("cancels the booking when someone declines on the room's copy, with the reason", async () => {
      const d = newDay();
      const r = nextRoom();
      const id = await invite(r.email, '10:00', '11:00', d);
      await s.standIn.personDeclinesForRoom(r.email, id);
      await s.settle();
      const m = await s.meetingOf(id);
      expect(m.status).toBe('cancelled');
      expect(m.cancelReason).toBe("The invitation was declined in the room's calendar");
    });

    it('declines an invitation the room cannot take (a clash), with the reason, and books nothing', async () => {
      const d = newDay();
      const r = nextRoom();
      const first = await invite(r.email, '10:00', '11:00', d);
      const second = await s.standIn.personCreates(r.email, {
        organizer: { email: 'bob@example.com', name: 'Bob' },
        title: 'Clash',
        start: s.ms('10:30', d),
        end: s.ms('11:30', d),
      });
      await s.settle();
      expect((await s.meetingOf(first)).status).toBe('active');
      const e = eventOn(r.email, second);
      expect(e.roomResponse).toBe('declined');
      expect(e.roomComment).toMatch(/\S/);
      const m = await s.meetingOf(second);
      if (m) expect(m.status).toBe('rejected');
    });

    it('a repeated notification changes nothing twice; a forged one is refused with 403 and reads nothing', async () => {
      const d = newDay();
      const r = nextRoom();
      const id = await invite(r.email, '10:00', '11:00', d);
      const before = await s.meetingOf(id);
      const statuses = await s.standIn.resendLast();
      expect(statuses.every((x) => x >= 200 && x < 300)).toBe(true);
      await s.settle();
      expect((await s.meetingOf(id)).history).toEqual(before.history);
      // A forgery: the right channel / subscription with a wrong token.
      s.standIn.autoNotify = false;
      try {
        await s.standIn.personUpdates(r.email, id, { start: s.ms('15:00', d), end: s.ms('16:00', d) });
        const reads = s.standIn.requests.length;
        const forged = await s.standIn.notify(r.email, { token: 'not-the-client-state' });
        expect(forged.length).toBeGreaterThan(0);
        expect(forged.every((x) => x === 403)).toBe(true);
        await s.standIn.settled();
        await s.c.svc.services.jobs.drain(CALENDAR_PULL_JOB);
        expect(s.standIn.requests.length).toBe(reads);
        expect(windowOf(await s.meetingOf(id))).toEqual(at('10:00', '11:00', d));
        // The genuine notification then applies the change, once.
        await s.standIn.notify(r.email);
        await s.settle();
        expect(windowOf(await s.meetingOf(id))).toEqual(at('15:00', '16:00', d));
      } finally {
        s.standIn.autoNotify = true;
      }
      expect(eventKinds(await kit().eventsOf(`Room ${r.key}`))).toEqual(['BOOK', 'MODIFY']);
    });

    it('renews a subscription before it expires', async () => {
      const r = nextRoom();
      const row = () =>
        s.c.svc.services.storage.db.selectFrom('calendar_rooms').selectAll().where('room_id', '=', s.c.id(r.key)).executeTakeFirstOrThrow();
      const before = await row();
      expect(Number(before.subscribe_due_at)).toBeLessThan(Number(before.expires_at));
      expect(Number(before.subscribe_due_at)).toBeGreaterThan(Date.now());
      // Time passes up to the renewal.
      await s.c.svc.services.storage.db
        .updateTable('calendar_rooms')
        .set({ subscribe_due_at: Date.now() - 1 })
        .where('room_id', '=', s.c.id(r.key))
        .execute();
      await s.settle();
      const after = await row();
      expect(Number(after.expires_at)).toBeGreaterThan(Number(before.expires_at));
      const active = s.standIn.subscriptions().filter((x) => x.active && x.calendarId === r.email);
      expect(active).toHaveLength(1);
      expect(active[0]!.id).toBe(after.subscription_id);
    });

    it('a lost notification (missed) and an expired cursor end in a full read: no change is lost', async () => {
      const d = newDay();
      const r = nextRoom();
      s.standIn.autoNotify = false;
      let id: string;
      try {
        id = await s.standIn.personCreates(r.email, { organizer: ALICE, title: 'Missed', start: s.ms('10:00', d), end: s.ms('11:00', d) });
        await s.standIn.lifecycle(r.email, 'missed');
        await s.settle();
      } finally {
        s.standIn.autoNotify = true;
      }
      expect((await s.meetingOf(id)).status).toBe('active');
      s.standIn.expireCursors(r.email);
      await s.standIn.personUpdates(r.email, id, { start: s.ms('12:00', d), end: s.ms('13:00', d) });
      await s.settle();
      expect(windowOf(await s.meetingOf(id))).toEqual(at('12:00', '13:00', d));
    });

    it('the provider down: the error is shown and retried with backoff; back up, the change arrives', async () => {
      const d = newDay();
      const r = nextRoom();
      s.standIn.down = true;
      let id: string;
      try {
        id = await s.standIn.personCreates(r.email, { organizer: ALICE, title: 'Outage', start: s.ms('10:00', d), end: s.ms('11:00', d) });
        await s.standIn.notify(r.email);
        await s.settle();
        const view = await s.roomView(r.key);
        expect(view.lastError).toMatch(/\S/);
        expect(view.lastErrorAt).not.toBeNull();
        expect(await s.meetingOf(id)).toBeNull();
      } finally {
        s.standIn.down = false;
      }
      // The retry falls due (time passes).
      await s.c.svc.services.storage.db
        .updateTable('calendar_rooms')
        .set({ sync_due_at: Date.now() - 1 })
        .where('room_id', '=', s.c.id(r.key))
        .where('sync_due_at', 'is not', null)
        .execute();
      await s.settle();
      expect((await s.meetingOf(id)).status).toBe('active');
      expect((await s.roomView(r.key)).lastError).toBeNull();
    });

    it("a booking made in the API is written to the room's calendar, moved there, and cancelled there; no PIN", async () => {
      const d = newDay();
      const r = nextRoom();
      const m = await s.c.bookRoom(r.key, '09:00', '10:00', d);
      await s.settle();
      const mine = () => s.standIn.events(r.email).filter((e) => e.bookingId === m._id);
      expect(mine()).toHaveLength(1);
      const e = mine()[0]!;
      expect(e).toMatchObject({ title: m.title, start: s.ms('09:00', d), end: s.ms('10:00', d), cancelled: false });
      expect(e.attendeeEmails).toContain(ALICE.email);
      expect(`${e.title} ${e.description}`).not.toContain(m.pin ?? '000000-no-pin');
      const patched = await s.c.svc.request('PATCH', `/meetings/${m._id}`, {
        token: s.c.alice,
        body: { startDateTime: s.c.t('11:00', d), endDateTime: s.c.t('12:00', d) },
      });
      expect(patched.status, patched.text).toBe(200);
      await s.settle();
      expect(mine()).toHaveLength(1);
      expect(mine()[0]).toMatchObject({ start: s.ms('11:00', d), end: s.ms('12:00', d), cancelled: false });
      const cancelled = await s.c.action(m._id, 'cancel');
      expect(cancelled.status, cancelled.text).toBeLessThan(300);
      await s.settle();
      expect(mine().every((x) => x.cancelled)).toBe(true);
      // Nothing came back as a booking of its own.
      expect(await s.meetingOf(e.id)).toMatchObject({ _id: m._id });
    });

    it('a series made in the API is one event per occurrence; a person moving one of them gets the series back', async () => {
      const d = newDay();
      const r = nextRoom();
      const m = await s.c.bookRoom(r.key, '07:00', '08:00', d, { recurrence: 'FREQ=DAILY;COUNT=3' });
      await s.settle();
      const mine = () =>
        s.standIn
          .events(r.email)
          .filter((e) => e.bookingId === m._id && !e.cancelled)
          .sort((a, b) => a.start - b.start);
      expect(mine().map((e) => [e.start, e.end])).toEqual([0, 1, 2].map((i) => [s.ms('07:00', d + i), s.ms('08:00', d + i)]));
      const second = mine()[1]!;
      await s.standIn.personUpdates(r.email, second.id, { start: s.ms('12:00', d + 1), end: s.ms('13:00', d + 1) });
      await s.settle();
      expect(mine().map((e) => [e.start, e.end])).toEqual([0, 1, 2].map((i) => [s.ms('07:00', d + i), s.ms('08:00', d + i)]));
      expect((await s.c.get(m._id)).status).toBe('active');
    });

    it('round trip: made in the API, moved on the room calendar by a person, moved in the service with one MODIFY; no loop', async () => {
      const d = newDay();
      const r = nextRoom();
      const m = await s.c.bookRoom(r.key, '09:00', '10:00', d);
      await s.settle();
      const e = s.standIn.events(r.email).find((x) => x.bookingId === m._id)!;
      await s.standIn.personUpdates(r.email, e.id, { start: s.ms('14:00', d), end: s.ms('15:00', d) });
      await s.settle();
      const moved = (await s.c.svc.ops('GET', `/ops/v1/meetings/${m._id}`)).body.data;
      expect(moved.status).toBe('active');
      expect(windowOf(moved)).toEqual(at('14:00', '15:00', d));
      expect(eventKinds(await kit().eventsOf(`Room ${r.key}`))).toEqual(['BOOK', 'MODIFY']);
      // Quiet afterwards: no more writes to the provider, one event on the calendar, one booking.
      const requests = s.standIn.requests.length;
      await s.settle();
      await s.settle();
      expect(s.standIn.requests.filter((x) => x.method !== 'GET').length).toBe(
        s.standIn.requests.slice(0, requests).filter((x) => x.method !== 'GET').length,
      );
      const live = s.standIn.events(r.email).filter((x) => !x.cancelled);
      expect(live).toHaveLength(1);
      expect(live[0]).toMatchObject({ bookingId: m._id, start: s.ms('14:00', d), end: s.ms('15:00', d) });
      const list = await s.c.svc.ops('GET', `/ops/v1/meetings?roomId=${s.c.id(r.key)}`);
      if (list.status === 200) expect(list.body.data.filter((x: any) => x.status !== 'cancelled')).toHaveLength(1);
    });

    it('a booking checked out early is taken off the room calendar (the room is free again); last: it moves the clock', async () => {
      const d = newDay();
      const r = nextRoom();
      const m = await s.c.bookRoom(r.key, '09:00', '11:00', d);
      await s.settle();
      const mine = () => s.standIn.events(r.email).filter((e) => e.bookingId === m._id);
      expect(mine().map((e) => e.cancelled)).toEqual([false]);
      await s.c.clockTo('09:05', d);
      expect((await s.c.action(m._id, 'check-in')).status).toBeLessThan(300);
      await s.c.clockTo('09:40', d);
      expect((await s.c.action(m._id, 'check-out')).status).toBeLessThan(300);
      await s.settle();
      expect(mine().map((e) => e.cancelled)).toEqual([true]);
    });
  });
}
