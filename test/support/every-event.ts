/**
 * Causes every event type of the catalogue over HTTP, as a third party would:
 * bookings of a room and a desk made, moved, cancelled and checked in through the
 * public API; reminders, no-show warnings and cancels, and ending-soon notices by
 * moving the sandbox clock (`POST /ops/v1/clock`); back-office holds and paid
 * bookings settled or lapsed through the ops payment routes; a recurring series
 * whose first occurrence is a no-show; and (optionally) a visitor invited, scanned
 * in and cancelled. A loopback receiver subscribed to every type gets them all.
 */
import { expect } from 'vitest';
import { WebhookReceiver, type ReceivedRequest } from './webhook-receiver.js';
import { startWebhookService, type WebhookCtx } from './webhook-site.js';
import { BOOKING_EVENT_TYPES, EVENT_TYPES } from '../../src/contract/events.js';

export const EVENTS_PATH = '/events';

export interface EveryEventCtx {
  c: WebhookCtx;
  rx: WebhookReceiver;
  /** Every delivery received, in arrival order. */
  deliveries(): ReceivedRequest[];
  close(): Promise<void>;
}

const PAID = { perHour: 300, perDay: 2000 };

/** A webhook site with a free, a paid and a series room and desk, listened to for every event type of the catalogue. */
export async function startEveryEventService(o: { visitors?: boolean } = {}): Promise<EveryEventCtx> {
  const rx = await WebhookReceiver.start();
  const spec = {
    rooms: [
      { key: 'ev-room', name: 'Ev Room' },
      { key: 'ev-room-paid', name: 'Ev Paid Room', chargeRate: PAID },
      { key: 'ev-room-series', name: 'Ev Series Room' },
    ],
    desks: [
      { key: 'ev-desk', name: 'Ev Desk' },
      { key: 'ev-desk-paid', name: 'Ev Paid Desk', chargeRate: PAID },
      { key: 'ev-desk-series', name: 'Ev Series Desk' },
    ],
    hooks: [{ key: 'every', url: rx.url(EVENTS_PATH), events: [...EVENT_TYPES] }],
    clockAt: '05:00',
  };
  const c = await startWebhookService({
    ...spec,
    // A lobby reader, so visitors can be invited and scanned in.
    ...(o.visitors
      ? {
          accessGroups: [
            {
              key: 'ev-lobby',
              project: 'tower',
              name: 'Lobby',
              devices: [{ key: 'ev-reader', name: 'Lobby reader', kind: 'card-reader' }],
            },
          ],
        }
      : {}),
  });
  return {
    c,
    rx,
    deliveries: () => rx.on(EVENTS_PATH),
    close: async () => {
      await c.close();
      await rx.close();
    },
  };
}

/**
 * Drives every booking event type of the catalogue (ROOM_* and DESK_*), and the
 * visitor events when `visitors`; waits until the receiver has them all.
 * The clock starts at 05:00 on day D and ends on D + 1.
 */
export async function driveEveryEvent(e: EveryEventCtx, o: { visitors?: boolean } = {}): Promise<void> {
  const { c } = e;
  const ok = (res: { status: number; text: string }, status: number) => expect(res.status, res.text).toBe(status);
  /** The booking of each asset kind that is checked in at 10:12. */
  const checkedIn: Record<string, string> = {};
  const settle = async (paymentId: string) => ok(await c.svc.ops('POST', `/ops/v1/payments/${paymentId}/settle`), 200);

  for (const kind of ['room', 'desk'] as const) {
    const book = kind === 'room' ? c.bookRoom : c.bookDesk;
    const key = (k: string) => `ev-${kind}${k}`;
    const assetField = kind === 'room' ? 'meetingRoomId' : 'deskId';

    // BOOK, MODIFY (PATCH), then at 10:10 NO_SHOW_WARNING; a check-in keeps it, ENDING_SOON at 11:15.
    const a = await book(key(''), '10:00', '11:00');
    ok(await c.patch(a._id, { endDateTime: c.t('11:30') }), 200);
    // BOOK, CANCEL by the organizer.
    const b = await book(key(''), '12:00', '13:00');
    ok(await c.action(b._id, 'cancel'), 202);
    // Nobody checks in: CANCEL by the system at 13:45.
    await book(key(''), '13:30', '14:30');
    // A back-office hold: PAYMENT_DUE; settled: BOOK (by the payments actor).
    const held = await c.book(
      {
        [assetField]: c.id(key('-paid')),
        organizerId: c.id('alice'),
        title: 'hold',
        startDateTime: c.t('16:00'),
        endDateTime: c.t('17:00'),
        paymentDueMinutes: 120,
      },
      c.portal,
    );
    ok(held, 201);
    await settle(held.body.data.payment.paymentId);
    // A self-service paid booking left unpaid: CANCEL when its payment window lapses (payments actor).
    await book(key('-paid'), '18:00', '19:00');
    // A daily series of two: its first occurrence is a no-show (NO_SHOW_WARNING, CANCEL of that occurrence),
    // the second gets its REMINDER on D + 1.
    await book(key('-series'), '19:30', '20:30', 0, { recurrence: 'FREQ=DAILY;COUNT=2' });
    checkedIn[kind] = a._id;
  }

  if (o.visitors) {
    const invite = (body: Record<string, unknown>) =>
      c.svc.ops('POST', '/ops/v1/visitors/invites', { projectId: c.id('tower'), hostUserId: c.id('alice'), ...body });
    const inv = await invite({ visitorName: 'Eve Visitor', startDateTime: c.t('05:00'), endDateTime: c.t('08:00') });
    ok(inv, 201);
    ok(await c.svc.ops('POST', `/ops/v1/devices/${c.id('ev-reader')}/scans`, { cardCode: inv.body.data.qrCardCode }), 200);
    const gone = await invite({ visitorName: 'Cancelled Carl', startDateTime: c.t('07:00'), endDateTime: c.t('09:00') });
    ok(gone, 201);
    ok(await c.svc.ops('POST', `/ops/v1/visitors/invites/${gone.body.data._id}/cancel`), 200);
  }

  await c.clockTo('10:12');
  for (const id of Object.values(checkedIn)) ok(await c.action(id, 'check-in'), 202);
  await c.clockTo('21:00');
  await c.clockTo('19:20', 1);
  await c.drain();
  const wanted = o.visitors ? EVENT_TYPES : BOOKING_EVENT_TYPES;
  await e.rx.waitFor(
    (all) => wanted.every((t) => all.some((r) => r.path === EVENTS_PATH && r.body?.type === t)),
    15_000,
    `every event type (${wanted.join(', ')})`,
  );
}
