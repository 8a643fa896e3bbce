/**
 * Booking events name their booking (api-spec.md "Events": a booking event is a
 * change signal, authoritative state comes from `GET /meetings/{id}`): every
 * booking event type of the catalogue is caused over HTTP and the sandbox clock,
 * and for each delivery a receiver re-reads `GET /meetings/{meetingId}` with the
 * app's token, finds the same booking on the same room or desk, and on a series
 * finds the occurrence (`occurrenceEventId`) in `GET /meetings`.
 * The list of booking event types comes from the contract, so a type added to
 * the catalogue that this drive does not cause makes the test fail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOKING_EVENT_TYPES, EVENT_TYPES, VISITOR_EVENT_TYPES } from '../../src/contract/events.js';
import { OBJECT_ID_PATTERN } from '../../src/contract/common.js';
import { qs } from '../support/catalogue.js';
import { expectedSignature, header, type ReceivedRequest } from '../support/webhook-receiver.js';
import { secretFor } from '../support/webhook-site.js';
import { driveEveryEvent, startEveryEventService, type EveryEventCtx } from '../support/every-event.js';

const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);

describe('booking events name their booking: a receiver re-reads GET /meetings/{meetingId}', () => {
  let e: EveryEventCtx;
  let booking: ReceivedRequest[];

  beforeAll(async () => {
    e = await startEveryEventService();
    await driveEveryEvent(e);
    booking = e.deliveries().filter((r) => BOOKING_EVENT_TYPES.includes(r.body?.type));
  });

  afterAll(async () => {
    await e?.close();
  });

  it('every event type of the catalogue is a booking event (ROOM_/DESK_) or a visitor event, and every booking event type was delivered', () => {
    // A type about a booking added to the catalogue outside BOOKING_EVENT_TYPES would escape this test: none is.
    const visitor: readonly string[] = VISITOR_EVENT_TYPES;
    expect(EVENT_TYPES.filter((t) => !BOOKING_EVENT_TYPES.includes(t) && !visitor.includes(t))).toEqual([]);
    expect(EVENT_TYPES.filter((t) => /^(ROOM|DESK)_/.test(t) && !BOOKING_EVENT_TYPES.includes(t))).toEqual([]);
    expect(visitor.every((t) => t.startsWith('VMS_'))).toBe(true);
    const seen = new Set(booking.map((r) => r.body.type));
    expect(BOOKING_EVENT_TYPES.filter((t) => !seen.has(t))).toEqual([]);
  });

  it('every booking event of every type carries meetingId, assetId and assetKind, and is signed over them', () => {
    for (const r of booking) {
      const { type, data } = r.body;
      const what = `${type} ${JSON.stringify(data)}`;
      expect(data.meetingId, what).toMatch(OBJECT_ID);
      expect(data.assetId, what).toMatch(OBJECT_ID);
      expect(data.assetKind, what).toBe(type.startsWith('ROOM_') ? 'room' : 'desk');
      if ('occurrenceEventId' in data) expect(data.occurrenceEventId, what).toMatch(OBJECT_ID);
      // The signature is over the raw bytes that carry these fields.
      expect(r.raw.toString('utf8')).toContain(`"meetingId":"${data.meetingId}"`);
      expect(header(r, 'x-service-signature')).toBe(expectedSignature(secretFor('every'), header(r, 'x-service-timestamp')!, r.raw));
    }
  });

  it('for each booking event, GET /meetings/{meetingId} with the app token answers 200 with that booking on that room or desk', async () => {
    const { c } = e;
    const read = new Map<string, any>();
    for (const r of booking) {
      const { type, data } = r.body;
      const what = `${type} ${JSON.stringify(data)}`;
      if (!read.has(data.meetingId)) {
        const res = await c.svc.request('GET', `/meetings/${data.meetingId}`, { token: c.portal });
        expect(res.status, `${what}: ${res.text}`).toBe(200);
        read.set(data.meetingId, res.body.data);
      }
      const m = read.get(data.meetingId);
      expect(m._id, what).toBe(data.meetingId);
      expect(m.projectId, what).toBe(data.projectId);
      expect(m.organizer.userId, what).toBe(data.userId);
      if (data.assetKind === 'room') {
        expect(m.meetingRoomId, what).toBe(data.assetId);
        expect(m.meetingRoomName, what).toBe(data.roomName);
        expect(m, what).not.toHaveProperty('deskId');
      } else {
        expect(m.deskId, what).toBe(data.assetId);
        expect(m.deskName, what).toBe(data.deskName);
        expect(m, what).not.toHaveProperty('meetingRoomId');
      }
      // A single booking names no occurrence; an event about a series names one.
      if (m.seriesMasterId) expect(data.occurrenceEventId, what).toMatch(OBJECT_ID);
      else expect(data, what).not.toHaveProperty('occurrenceEventId');
    }
    // The asset ids are the site's, and both kinds were re-read.
    expect(new Set(booking.map((r) => r.body.data.assetId))).toEqual(
      new Set(['ev-room', 'ev-room-paid', 'ev-room-series', 'ev-desk', 'ev-desk-paid', 'ev-desk-series'].map((k) => c.id(k))),
    );
  });

  it("an event about an occurrence of a series names it: GET /meetings lists that occurrence under the series, at the event's times", async () => {
    const { c } = e;
    const ofSeries = booking.filter((r) => 'occurrenceEventId' in r.body.data);
    // The series' BOOK, its first occurrence's no-show warning and cancel, and the second one's reminder, per asset kind.
    for (const kind of ['ROOM', 'DESK']) {
      const types = ofSeries.filter((r) => r.body.type.startsWith(kind)).map((r) => r.body.type);
      expect(types, kind).toEqual(
        expect.arrayContaining([`${kind}_BOOK`, `${kind}_NO_SHOW_WARNING`, `${kind}_CANCEL`, `${kind}_REMINDER`]),
      );
    }
    const occurrenceIds = new Set(ofSeries.map((r) => r.body.data.occurrenceEventId));
    expect(occurrenceIds.size).toBe(4); // two occurrences of two series
    for (const r of ofSeries) {
      const { type, data } = r.body;
      const what = `${type} ${JSON.stringify(data)}`;
      const filter = data.assetKind === 'room' ? { meetingRoomId: data.assetId } : { deskId: data.assetId };
      const res = await c.svc.request('GET', `/meetings${qs({ from: c.t('00:00', -1), to: c.t('00:00', 3), ...filter, limit: 3000 })}`, {
        token: c.portal,
      });
      expect(res.status, res.text).toBe(200);
      const rows = res.body.data.filter((row: any) => row.occurrenceEventId === data.occurrenceEventId);
      expect(rows, what).toHaveLength(1);
      const [row] = rows;
      expect(row._id, what).toBe(data.meetingId);
      expect(row.seriesMasterId, what).toBe(data.meetingId);
      if (data.bookingDate) expect(Date.parse(row.startDateTime), what).toBe(Date.parse(data.bookingDate));
      if (type.endsWith('_CANCEL')) {
        expect(row.status, what).toBe('cancelled');
        expect(row.cancelReason, what).toBe(data.cancelReason);
      }
    }
    // The reminder of the second occurrence (on the next day) names another occurrence than the no-show of the first.
    for (const kind of ['ROOM', 'DESK']) {
      const of = (type: string) =>
        ofSeries
          .filter((r) => r.body.type === `${kind}_${type}`)
          .sort((a, b) => Date.parse(a.body.occurredAt) - Date.parse(b.body.occurredAt));
      const [firstReminder, secondReminder] = of('REMINDER');
      const noShow = of('NO_SHOW_WARNING')[0].body.data.occurrenceEventId;
      expect(firstReminder.body.data.occurrenceEventId, kind).toBe(noShow);
      expect(secondReminder.body.data.occurrenceEventId, kind).not.toBe(noShow);
      // The first occurrence is the series' own id (its BOOK names it); actions still take meetingId.
      expect(of('BOOK')[0].body.data.occurrenceEventId, kind).toBe(noShow);
    }
  });
});
