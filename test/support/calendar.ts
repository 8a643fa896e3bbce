/**
 * Calendar sync test kit: a site whose rooms have mailbox emails, a listener for
 * room events, and a builder of iTIP messages shaped like the ones Google Calendar
 * and Outlook send (UTC times, or TZID with a VTIMEZONE).
 */
import { DateTime } from 'luxon';
import { expect } from 'vitest';
import { OPS_TOKEN, startTestService, type HttpResult, type TestService } from './test-service.js';
import { actAsToken, appToken, applySite, idOf, type SiteIds } from './fixtures.js';
import { at, dayAhead, everyDay, setClock } from './catalogue.js';
import { ROOM_EVENTS, webhookSite } from './webhook-site.js';
import { WebhookReceiver } from './webhook-receiver.js';

export const TZ = 'Asia/Bangkok';
export const ORCHID = 'orchid@rooms.example';
export const LOTUS = 'lotus@rooms.example';
export const IRIS = 'iris@rooms.example';
export const ROSE = 'rose@rooms.example';
export const LILY = 'lily@rooms.example';

/**
 * webhookSite rooms (06:00–23:00 every day, cleaning 15 min) with mailboxes: orchid,
 * rose (free), lotus (paid), iris (private), lily (open around the clock); plus ben (member, blocked from booking),
 * and a listener of every room event.
 */
export function calendarSite(receiver: WebhookReceiver) {
  const doc = webhookSite({
    rooms: [
      { key: 'orchid', name: 'Orchid' },
      { key: 'rose', name: 'Rose' },
      { key: 'lotus', name: 'Lotus', chargeRate: { perHour: 100, perDay: 0 } },
      { key: 'iris', name: 'Iris' },
      { key: 'lily', name: 'Lily' },
    ],
    hooks: [{ key: 'rooms', url: receiver.url('/rooms'), events: ROOM_EVENTS }],
  }) as any;
  const emails: Record<string, string> = { orchid: ORCHID, rose: ROSE, lotus: LOTUS, iris: IRIS, lily: LILY };
  for (const r of doc.rooms) r.email = emails[r.key];
  doc.rooms.find((r: any) => r.key === 'iris').isPublic = false;
  // Lily is open around the clock and takes whole days (all-day invitations).
  const lily = doc.rooms.find((r: any) => r.key === 'lily');
  lily.config = { ...lily.config, ...everyDay('00:00:00', '24:00:00'), maxDurationMinutes: 1440 };
  // Rose takes bookings a year ahead (the time-zone test books across the next US DST change).
  doc.rooms.find((r: any) => r.key === 'rose').config.maxAdvanceBookingDays = 400;
  doc.users.push({
    key: 'ben',
    email: 'ben@example.com',
    name: 'Ben Blocked',
    memberships: [{ project: 'tower', role: 'member' }],
    blockedFromBooking: true,
  });
  return doc;
}

export interface InviteSpec {
  method?: 'REQUEST' | 'CANCEL' | 'REPLY';
  uid: string;
  seq?: number;
  /** ISO instants (any offset); written in UTC unless `tz` is set. */
  start: string;
  end: string;
  organizer?: string | null;
  rooms?: string[];
  guests?: string[];
  summary?: string;
  description?: string;
  rrule?: string;
  exdates?: string[];
  /** ISO instant of the occurrence an override replaces. */
  recurrenceId?: string;
  status?: string;
  /** PARTSTAT of the room attendees (default NEEDS-ACTION; REPLY: DECLINED). */
  roomPartstat?: string;
  dtstamp?: string;
  /** Write DTSTART/DTEND as local time in this zone (TZID) with a VTIMEZONE block (America/New_York only). */
  tz?: 'America/New_York';
  /** All-day: VALUE=DATE from start's date to end's date (exclusive). */
  allDay?: boolean;
  prodId?: string;
}

const utc = (iso: string) => DateTime.fromISO(iso, { setZone: true }).toUTC().toFormat("yyyyMMdd'T'HHmmss'Z'");

const NEW_YORK = [
  'BEGIN:VTIMEZONE',
  'TZID:America/New_York',
  'X-LIC-LOCATION:America/New_York',
  'BEGIN:DAYLIGHT',
  'TZOFFSETFROM:-0500',
  'TZOFFSETTO:-0400',
  'TZNAME:EDT',
  'DTSTART:19700308T020000',
  'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU',
  'END:DAYLIGHT',
  'BEGIN:STANDARD',
  'TZOFFSETFROM:-0400',
  'TZOFFSETTO:-0500',
  'TZNAME:EST',
  'DTSTART:19701101T020000',
  'RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU',
  'END:STANDARD',
  'END:VTIMEZONE',
];

/** One iTIP message (CRLF line endings, as mail clients send them). */
export function ical(s: InviteSpec): string {
  const method = s.method ?? 'REQUEST';
  const when = (name: string, iso: string) => {
    if (s.allDay) return `${name};VALUE=DATE:${DateTime.fromISO(iso, { setZone: true }).toFormat('yyyyMMdd')}`;
    if (s.tz) return `${name};TZID=${s.tz}:${DateTime.fromISO(iso).setZone(s.tz).toFormat("yyyyMMdd'T'HHmmss")}`;
    return `${name}:${utc(iso)}`;
  };
  const roomPartstat = s.roomPartstat ?? (method === 'REPLY' ? 'DECLINED' : 'NEEDS-ACTION');
  const lines = [
    'BEGIN:VCALENDAR',
    `PRODID:${s.prodId ?? '-//Google Inc//Google Calendar 70.9054//EN'}`,
    'VERSION:2.0',
    'CALSCALE:GREGORIAN',
    `METHOD:${method}`,
    ...(s.tz ? NEW_YORK : []),
    'BEGIN:VEVENT',
    when('DTSTART', s.start),
    when('DTEND', s.end),
    `DTSTAMP:${utc(s.dtstamp ?? new Date().toISOString())}`,
    ...(s.organizer === null ? [] : [`ORGANIZER;CN=Organizer:mailto:${s.organizer ?? 'alice@example.com'}`]),
    `UID:${s.uid}`,
    ...(s.recurrenceId ? [`RECURRENCE-ID:${utc(s.recurrenceId)}`] : []),
    ...(s.rrule ? [`RRULE:${s.rrule}`] : []),
    ...(s.exdates ?? []).map((x) => `EXDATE:${utc(x)}`),
    ...(s.rooms ?? [ORCHID]).map(
      (r) => `ATTENDEE;CUTYPE=RESOURCE;ROLE=REQ-PARTICIPANT;PARTSTAT=${roomPartstat};RSVP=TRUE;CN=${r.split('@')[0]}:mailto:${r}`,
    ),
    ...(method === 'REPLY'
      ? []
      : (s.guests ?? ['guest@partner.example']).map(
          (g) => `ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=${g.split('@')[0]}:mailto:${g}`,
        )),
    `SEQUENCE:${s.seq ?? 0}`,
    `STATUS:${s.status ?? (method === 'CANCEL' ? 'CANCELLED' : 'CONFIRMED')}`,
    `SUMMARY:${s.summary ?? 'Planning'}`,
    ...(s.description ? [`DESCRIPTION:${s.description}`] : []),
    'TRANSP:OPAQUE',
    'END:VEVENT',
    'END:VCALENDAR',
  ];
  return lines.join('\r\n') + '\r\n';
}

export interface CalendarCtx {
  svc: TestService;
  receiver: WebhookReceiver;
  ids: SiteIds;
  D: DateTime;
  portal: string;
  id(key: string): string;
  t(hhmm: string, plusDays?: number): string;
  send(spec: InviteSpec | string, provider?: string, query?: string): Promise<HttpResult>;
  /** Sends and asserts 200; returns data. */
  sendOk(spec: InviteSpec | string, provider?: string, query?: string): Promise<any>;
  meeting(id: string): Promise<any>;
  clockTo(hhmm: string, plusDays?: number): Promise<void>;
  /** Room events received for a meeting, in order (after the deliveries drain). */
  events(meetingId: string): Promise<any[]>;
  close(): Promise<void>;
}

let uidCounter = 0;
export const newUid = (tag: string) => `${tag}-${Date.now().toString(36)}-${++uidCounter}@google.com`;

export async function startCalendarService(): Promise<CalendarCtx> {
  const receiver = await WebhookReceiver.start();
  const svc = await startTestService();
  const ids = await applySite(svc, calendarSite(receiver));
  const D = await dayAhead(svc, TZ, 2);
  await setClock(svc, at(D, '06:00'));
  const portal = (await appToken(svc)).access_token;
  await actAsToken(svc, { subject: 'ext-alice' });
  const send = (spec: InviteSpec | string, provider = 'google', query = '') =>
    svc.request('POST', `/ops/v1/calendar-sync/${provider}/messages${query}`, {
      raw: typeof spec === 'string' ? spec : ical(spec),
      token: OPS_TOKEN,
      headers: { 'content-type': 'text/calendar; charset=utf-8; method=REQUEST' },
    });
  const ctx: CalendarCtx = {
    svc,
    receiver,
    ids,
    D,
    portal,
    id: (key) => idOf(ids, key),
    t: (hhmm, plusDays = 0) => at(D, hhmm, plusDays),
    send,
    sendOk: async (spec, provider, query) => {
      const res = await send(spec, provider, query);
      expect(res.status, res.text).toBe(200);
      return res.body.data;
    },
    meeting: async (id) => {
      const res = await svc.request('GET', `/meetings/${id}`, { token: portal });
      expect(res.status, res.text).toBe(200);
      return res.body.data;
    },
    clockTo: (hhmm, plusDays = 0) => setClock(svc, at(D, hhmm, plusDays)),
    events: async (meetingId) => {
      await svc.services.jobs.drain();
      const rows = await svc.services.storage.db
        .selectFrom('events')
        .select(['type', 'data', 'occurred_at'])
        .where('meeting_id', '=', meetingId)
        .orderBy('occurred_at')
        .orderBy('id')
        .execute();
      return rows.map((r) => ({ type: r.type, data: JSON.parse(r.data) }));
    },
    close: async () => {
      await svc.close();
      await receiver.close();
    },
  };
  return ctx;
}
