/**
 * Room feeds over HTTP (docs/calendar-sync.md "Room feeds"): the ops API shows a
 * room's secret feed address, the public address answers text/calendar with one
 * VEVENT per booking (parsed back with ical.js), UIDs stay stable across fetches
 * and moves while SEQUENCE grows, cancelled bookings show as CANCELLED for 7 days,
 * nothing personal is in the feed, and rotate/revoke make old addresses 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ICAL from 'ical.js';
import { expectError, UNKNOWN_ID } from '../support/fixtures.js';
import { okData } from '../support/catalogue.js';
import { startMeetingService, type MeetingCtx } from '../support/meetings.js';

const ROOMS = [
  { key: 'f1', name: 'Feed Room' },
  { key: 'f2', name: 'Other Room' },
];
const DOMAIN = 'rooms.booking-service';

interface FeedEvent {
  uid: string;
  start: number;
  end: number;
  sequence: number;
  status: string;
  bookingStatus: string;
  summary: string;
  stamp: number;
}

function parseFeed(text: string): { name: string; timezone: string; prodid: string; method: unknown; events: FeedEvent[] } {
  const cal = new ICAL.Component(ICAL.parse(text) as any[]);
  const events = cal.getAllSubcomponents('vevent').map((v) => ({
    uid: String(v.getFirstPropertyValue('uid')),
    start: (v.getFirstPropertyValue('dtstart') as ICAL.Time).toJSDate().getTime(),
    end: (v.getFirstPropertyValue('dtend') as ICAL.Time).toJSDate().getTime(),
    sequence: Number(v.getFirstPropertyValue('sequence')),
    status: String(v.getFirstPropertyValue('status')),
    bookingStatus: String(v.getFirstPropertyValue('x-booking-status')),
    summary: String(v.getFirstPropertyValue('summary')),
    stamp: (v.getFirstPropertyValue('dtstamp') as ICAL.Time).toJSDate().getTime(),
  }));
  return {
    name: String(cal.getFirstPropertyValue('x-wr-calname')),
    timezone: String(cal.getFirstPropertyValue('x-wr-timezone')),
    prodid: String(cal.getFirstPropertyValue('prodid')),
    method: cal.getFirstPropertyValue('method'),
    events,
  };
}

describe('room feeds', () => {
  let c: MeetingCtx;
  let feedPath: string;
  let planning: any; // alice, f1, with an attendee; moved later
  let untitled: any; // bob, f1, no title
  let doomed: any; // alice, f1, cancelled
  let elsewhere: any; // alice, f2
  let series: any; // alice, f1, three daily occurrences

  const opsFeed = (roomKey: string, suffix = '', method = 'GET') =>
    c.svc.ops(method, `/ops/v1/calendar-sync/rooms/${c.id(roomKey)}/feed${suffix}`);
  const pathOf = (url: string) => {
    expect(url.startsWith(`${c.svc.url}/calendar-feeds/`), url).toBe(true);
    expect(url.endsWith('.ics')).toBe(true);
    return url.slice(c.svc.url.length);
  };
  const fetchFeed = async (path = feedPath) => {
    const res = await c.svc.request('GET', path);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('private, max-age=60');
    return { text: res.text, ...parseFeed(res.text) };
  };
  const eventOf = (events: FeedEvent[], uid: string) => {
    const e = events.find((x) => x.uid === uid);
    expect(e, `no VEVENT ${uid}`).toBeDefined();
    return e!;
  };

  beforeAll(async () => {
    c = await startMeetingService({ rooms: ROOMS });
    planning = await c.bookRoom('alice', 'f1', '09:00', '10:00', { title: 'Planning', attendees: [{ email: 'carol@example.com' }] }, 1);
    untitled = await c.bookRoom('bob', 'f1', '14:00', '15:00', { title: '' }, 1);
    doomed = await c.bookRoom('alice', 'f1', '16:00', '17:00', { title: 'Doomed' }, 1);
    elsewhere = await c.bookRoom('alice', 'f2', '09:00', '10:00', { title: 'Elsewhere' }, 1);
    series = await c.bookRoom('alice', 'f1', '18:00', '19:00', { title: 'Daily', recurrence: 'FREQ=DAILY;COUNT=3' }, 2);
  });
  afterAll(async () => {
    await c?.close();
  });

  it('ops routes need the ops token', async () => {
    const path = `/ops/v1/calendar-sync/rooms/${c.id('f1')}/feed`;
    for (const [method, p] of [
      ['GET', path],
      ['POST', `${path}/rotate`],
      ['DELETE', path],
    ] as const) {
      const res = await c.svc.request(method, p, { token: null });
      expect(res.status, `${method} ${p}`).toBe(401);
      const wrong = await c.svc.request(method, p, { token: c.tok.alice });
      expect(wrong.status, `${method} ${p} with an API token`).toBe(401);
    }
  });

  it('an unknown room is 404 KS005 on every ops route', async () => {
    const path = `/ops/v1/calendar-sync/rooms/${UNKNOWN_ID}/feed`;
    expectError(await c.svc.ops('GET', path), 404, 'KS005');
    expectError(await c.svc.ops('POST', `${path}/rotate`), 404, 'KS005');
    expectError(await c.svc.ops('DELETE', path), 404, 'KS005');
  });

  it("GET gives the room's secret address, the same one on every read", async () => {
    const feed = okData(await opsFeed('f1'));
    expect(feed.roomId).toBe(c.id('f1'));
    expect(Number.isNaN(Date.parse(feed.createdAt))).toBe(false);
    feedPath = pathOf(feed.url);
    expect(feedPath).toMatch(/^\/calendar-feeds\/[A-Za-z0-9_-]{43}\.ics$/);
    expect(okData(await opsFeed('f1'))).toEqual(feed);
    // Another room has another address.
    expect(okData(await opsFeed('f2')).url).not.toBe(feed.url);
  });

  it("the feed: the room's name and zone, one VEVENT per booking (and per occurrence) in UTC, nothing of other rooms", async () => {
    const f = await fetchFeed();
    expect(f.name).toBe('Feed Room');
    expect(f.timezone).toBe('Asia/Bangkok');
    expect(f.prodid).toMatch(/Room and Desk Booking Service/);
    expect(f.method).toBeNull();
    expect(f.text).toMatch(/^BEGIN:VCALENDAR\r\n/);
    expect(f.text).not.toMatch(/^METHOD:/m);

    const uids = f.events.map((e) => e.uid).sort();
    // A series' first occurrence has the meeting's id; the others their own (occurrenceEventId).
    expect(uids).toHaveLength(6);
    expect(uids).toEqual(
      expect.arrayContaining([
        `${planning._id}@${DOMAIN}`,
        `${untitled._id}@${DOMAIN}`,
        `${doomed._id}@${DOMAIN}`,
        `${series._id}-${series._id}@${DOMAIN}`,
      ]),
    );
    expect(uids.filter((u) => u.startsWith(`${series._id}-`))).toHaveLength(3);
    expect(f.text).not.toContain(elsewhere._id);
    expect(f.text).not.toContain('Elsewhere');

    const p = eventOf(f.events, `${planning._id}@${DOMAIN}`);
    expect(p).toMatchObject({
      start: Date.parse(c.t('09:00', 1)),
      end: Date.parse(c.t('10:00', 1)),
      status: 'CONFIRMED',
      bookingStatus: 'active',
      summary: 'Planning',
      sequence: 0,
    });
    // DTSTAMP is the booking's updatedAt (iCalendar keeps whole seconds).
    expect(p.stamp).toBe(Math.floor(Date.parse(planning.updatedAt) / 1000) * 1000);
    expect(eventOf(f.events, `${untitled._id}@${DOMAIN}`).summary).toBe('Booked');
    // Instants in UTC (…Z), never floating or local times.
    for (const line of f.text.split('\r\n').filter((l) => /^(DTSTART|DTEND|DTSTAMP)/.test(l)))
      expect(line).toMatch(/^[A-Z]+:\d{8}T\d{6}Z$/);

    const daily = f.events.filter((e) => e.uid.startsWith(`${series._id}-`)).sort((a, b) => a.start - b.start);
    expect(daily.map((e) => e.start)).toEqual([2, 3, 4].map((d) => Date.parse(c.t('18:00', d))));
    expect(daily.map((e) => e.end)).toEqual([2, 3, 4].map((d) => Date.parse(c.t('19:00', d))));
    expect(daily.every((e) => e.summary === 'Daily' && e.status === 'CONFIRMED')).toBe(true);

    // Stable across fetches.
    const again = await fetchFeed();
    expect(again.events.map((e) => e.uid).sort()).toEqual(uids);
  });

  it('nothing personal: no PIN, no attendee or organizer email, no token in the text', async () => {
    const { text } = await fetchFeed();
    const full = okData(await c.get('alice', planning._id));
    expect(planning.pinCode).toMatch(/^\d{6}$/);
    for (const pin of [planning.pinCode, doomed.pinCode, series.pinCode, untitled.pinCode].filter(Boolean)) {
      expect(text).not.toMatch(new RegExp(`(^|[^0-9])${pin}([^0-9]|$)`, 'm'));
    }
    expect(full.attendees.map((a: any) => a.email)).toContain('carol@example.com');
    expect(text).not.toMatch(/@example\.com/i);
    expect(text).not.toContain(full.organizer.email);
    expect(text).not.toContain('carol');
    expect(text).not.toMatch(/^(ORGANIZER|ATTENDEE)/m);
    expect(text).not.toContain(feedPath.slice('/calendar-feeds/'.length, -4));
  });

  it('a move keeps the UID, changes the times and raises SEQUENCE', async () => {
    const before = eventOf((await fetchFeed()).events, `${planning._id}@${DOMAIN}`);
    const res = await c.patch('alice', planning._id, { startDateTime: c.t('10:00', 1), endDateTime: c.t('11:00', 1) });
    expect(res.status, res.text).toBe(200);
    const after = eventOf((await fetchFeed()).events, `${planning._id}@${DOMAIN}`);
    expect(after.start).toBe(Date.parse(c.t('10:00', 1)));
    expect(after.end).toBe(Date.parse(c.t('11:00', 1)));
    expect(after.sequence).toBeGreaterThan(before.sequence);
    expect(after.stamp).toBeGreaterThanOrEqual(before.stamp);
    // A title edit keeps the times: SEQUENCE stays.
    expect((await c.patch('alice', planning._id, { title: 'Planning v2' })).status).toBe(200);
    const renamed = eventOf((await fetchFeed()).events, `${planning._id}@${DOMAIN}`);
    expect(renamed.summary).toBe('Planning v2');
    expect(renamed.sequence).toBe(after.sequence);
  });

  it('a cancelled booking shows as STATUS:CANCELLED, then leaves the feed 7 days after its cancellation', async () => {
    const before = eventOf((await fetchFeed()).events, `${doomed._id}@${DOMAIN}`);
    const res = await c.action('alice', doomed._id, 'cancel');
    expect(res.status, res.text).toBe(202);
    const f = await fetchFeed();
    const e = eventOf(f.events, `${doomed._id}@${DOMAIN}`);
    expect(e).toMatchObject({ status: 'CANCELLED', bookingStatus: 'cancelled', start: Date.parse(c.t('16:00', 1)) });
    expect(e.sequence).toBeGreaterThan(before.sequence);
    expect(f.text).toMatch(/^STATUS:CANCELLED$/m);

    const day = 24 * 60;
    const almost = await c.svc.ops('POST', '/ops/v1/clock', { advanceMinutes: 7 * day - 10 });
    expect(almost.status, almost.text).toBe(200);
    expect((await fetchFeed()).events.map((x) => x.uid)).toContain(`${doomed._id}@${DOMAIN}`);
    const past = await c.svc.ops('POST', '/ops/v1/clock', { advanceMinutes: 20 });
    expect(past.status, past.text).toBe(200);
    const later = await fetchFeed();
    expect(later.events.map((x) => x.uid)).not.toContain(`${doomed._id}@${DOMAIN}`);
    // Bookings that ended less than 30 days ago are still there (no longer cancelled ones aside).
    expect(later.events.some((x) => x.uid.startsWith(`${series._id}-`))).toBe(true);
  });

  it('rotate: the old address is 404 at once, the new one works', async () => {
    const old = feedPath;
    const rotated = okData(await opsFeed('f1', '/rotate', 'POST'));
    expect(rotated.roomId).toBe(c.id('f1'));
    const fresh = pathOf(rotated.url);
    expect(fresh).not.toBe(old);
    expectError(await c.svc.request('GET', old), 404, 'KS005');
    expect((await fetchFeed(fresh)).name).toBe('Feed Room');
    expect(okData(await opsFeed('f1')).url).toBe(rotated.url);
    feedPath = fresh;
  });

  it('DELETE revokes the feed (404); the next GET makes a new address', async () => {
    const res = await opsFeed('f1', '', 'DELETE');
    expect(res.status, res.text).toBe(204);
    expect(res.text).toBe('');
    expectError(await c.svc.request('GET', feedPath), 404, 'KS005');
    const again = okData(await opsFeed('f1'));
    expect(pathOf(again.url)).not.toBe(feedPath);
    await fetchFeed(pathOf(again.url));
  });

  it('unknown, malformed and suffix-less tokens are 404 KS005', async () => {
    const token = pathOf(okData(await opsFeed('f1')).url).slice('/calendar-feeds/'.length, -4);
    expectError(await c.svc.request('GET', `/calendar-feeds/${'A'.repeat(43)}.ics`), 404, 'KS005');
    expectError(await c.svc.request('GET', '/calendar-feeds/nope.ics'), 404, 'KS005');
    expectError(await c.svc.request('GET', `/calendar-feeds/${token}`), 404, 'KS005');
    expectError(await c.svc.request('GET', `/calendar-feeds/${token}.ICS`), 404, 'KS005');
  });
});
