/**
 * The iCalendar layer of calendar sync: parses the iTIP messages (RFC 5546) a
 * room's mailbox receives and builds the room's REPLY. Pure: no HTTP, no SQL,
 * no clock (the caller passes `now`). Parsing and generation go through ical.js;
 * zones come from the message's own VTIMEZONEs (never registered globally), else
 * luxon for IANA names and a Windows → IANA table for Exchange-style names.
 */
import { createHash } from 'node:crypto';
import ICAL from 'ical.js';
import { DateTime, IANAZone } from 'luxon';
import type { EventTimes } from './rules/sync-rules.js';

export interface ItipAttendee {
  /** Lower-cased, without "mailto:". */
  email: string;
  /** CN. */
  name: string | null;
  /** Upper-cased; 'NEEDS-ACTION' when absent. */
  partstat: string;
  role: string | null;
  /** Upper-cased, e.g. ROOM, RESOURCE, INDIVIDUAL. */
  cutype: string | null;
}

export interface ItipEvent extends EventTimes {
  uid: string;
  /** For an override (RECURRENCE-ID): the original start of the occurrence it replaces, epoch ms; null for the master / a single event. */
  recurrenceId: number | null;
  /** SEQUENCE, default 0. */
  sequence: number;
  /** DTSTAMP epoch ms. */
  dtstamp: number | null;
  /** '' when absent. */
  summary: string;
  /** '' when absent. */
  description: string;
  location: string | null;
  /** The IANA zone of DTSTART when it had a TZID that resolves to one (IANA name as-is; a Windows zone name mapped to IANA; otherwise the VTIMEZONE's X-LIC-LOCATION if present); null for UTC, floating or unresolved. */
  timeZone: string | null;
  organizer: { email: string; name: string | null } | null;
  attendees: ItipAttendee[];
  /** The RRULE value as written, without 'RRULE:'; null when none. */
  rrule: string | null;
  /** EXDATE instants, epoch ms. */
  exdates: number[];
  /** STATUS upper-cased. */
  status: string | null;
}

export interface ItipMessage {
  /** Upper-cased; '' when absent. */
  method: string;
  prodId: string | null;
  /** VEVENTs: the master (recurrenceId null) first, then overrides by recurrenceId. */
  events: ItipEvent[];
}

export type ItipParse = { ok: true; message: ItipMessage } | { ok: false; errors: string[] };

export interface ReplyInput {
  uid: string;
  /** Copied as RECURRENCE-ID (UTC) when set. */
  recurrenceId?: number | null;
  /** Copied from the request. */
  sequence: number;
  summary?: string;
  /** DTSTART/DTEND in UTC when known. */
  start?: number;
  end?: number;
  roomEmail: string;
  /** CN of the room attendee. */
  roomName: string;
  organizer: { email: string; name: string | null } | null;
  partstat: 'ACCEPTED' | 'DECLINED';
  /** Plain-words reason, e.g. 'Orchid is booked from 10:00 to 11:00 that day' or 'Accepted'. */
  comment: string;
  /** DTSTAMP. */
  now: number;
  /** Default '-//Room and Desk Booking Service//Calendar sync//EN'. */
  prodId?: string;
}

export const DEFAULT_PRODID = '-//Room and Desk Booking Service//Calendar sync//EN';
const DAY_MS = 86_400_000;

// ---------------------------------------------------------------------------
// Windows → IANA (CLDR windowsZones.xml, territory "001")
// ---------------------------------------------------------------------------

const WINDOWS_ZONES: Record<string, string> = {
  'Dateline Standard Time': 'Etc/GMT+12',
  'UTC-11': 'Etc/GMT+11',
  'Hawaiian Standard Time': 'Pacific/Honolulu',
  'Alaskan Standard Time': 'America/Anchorage',
  'Pacific Standard Time (Mexico)': 'America/Tijuana',
  'Pacific Standard Time': 'America/Los_Angeles',
  'US Mountain Standard Time': 'America/Phoenix',
  'Mountain Standard Time (Mexico)': 'America/Mazatlan',
  'Mountain Standard Time': 'America/Denver',
  'Central America Standard Time': 'America/Guatemala',
  'Central Standard Time': 'America/Chicago',
  'Central Standard Time (Mexico)': 'America/Mexico_City',
  'Canada Central Standard Time': 'America/Regina',
  'SA Pacific Standard Time': 'America/Bogota',
  'Eastern Standard Time': 'America/New_York',
  'Eastern Standard Time (Mexico)': 'America/Cancun',
  'US Eastern Standard Time': 'America/Indiana/Indianapolis',
  'Venezuela Standard Time': 'America/Caracas',
  'Atlantic Standard Time': 'America/Halifax',
  'SA Western Standard Time': 'America/La_Paz',
  'Pacific SA Standard Time': 'America/Santiago',
  'Newfoundland Standard Time': 'America/St_Johns',
  'E. South America Standard Time': 'America/Sao_Paulo',
  'Argentina Standard Time': 'America/Argentina/Buenos_Aires',
  'SA Eastern Standard Time': 'America/Cayenne',
  'Montevideo Standard Time': 'America/Montevideo',
  UTC: 'Etc/UTC',
  'GMT Standard Time': 'Europe/London',
  'Greenwich Standard Time': 'Atlantic/Reykjavik',
  'Morocco Standard Time': 'Africa/Casablanca',
  'W. Europe Standard Time': 'Europe/Berlin',
  'Central Europe Standard Time': 'Europe/Budapest',
  'Romance Standard Time': 'Europe/Paris',
  'Central European Standard Time': 'Europe/Warsaw',
  'W. Central Africa Standard Time': 'Africa/Lagos',
  'GTB Standard Time': 'Europe/Bucharest',
  'E. Europe Standard Time': 'Europe/Chisinau',
  'FLE Standard Time': 'Europe/Kiev',
  'Israel Standard Time': 'Asia/Jerusalem',
  'Egypt Standard Time': 'Africa/Cairo',
  'South Africa Standard Time': 'Africa/Johannesburg',
  'Jordan Standard Time': 'Asia/Amman',
  'Turkey Standard Time': 'Europe/Istanbul',
  'Arabic Standard Time': 'Asia/Baghdad',
  'Arab Standard Time': 'Asia/Riyadh',
  'Russian Standard Time': 'Europe/Moscow',
  'E. Africa Standard Time': 'Africa/Nairobi',
  'Iran Standard Time': 'Asia/Tehran',
  'Arabian Standard Time': 'Asia/Dubai',
  'Georgian Standard Time': 'Asia/Tbilisi',
  'Caucasus Standard Time': 'Asia/Yerevan',
  'Afghanistan Standard Time': 'Asia/Kabul',
  'West Asia Standard Time': 'Asia/Tashkent',
  'Ekaterinburg Standard Time': 'Asia/Yekaterinburg',
  'Pakistan Standard Time': 'Asia/Karachi',
  'India Standard Time': 'Asia/Kolkata',
  'Sri Lanka Standard Time': 'Asia/Colombo',
  'Nepal Standard Time': 'Asia/Kathmandu',
  'Central Asia Standard Time': 'Asia/Almaty',
  'Bangladesh Standard Time': 'Asia/Dhaka',
  'Myanmar Standard Time': 'Asia/Yangon',
  'SE Asia Standard Time': 'Asia/Bangkok',
  'N. Central Asia Standard Time': 'Asia/Novosibirsk',
  'North Asia Standard Time': 'Asia/Krasnoyarsk',
  'China Standard Time': 'Asia/Shanghai',
  'North Asia East Standard Time': 'Asia/Irkutsk',
  'Singapore Standard Time': 'Asia/Singapore',
  'W. Australia Standard Time': 'Australia/Perth',
  'Taipei Standard Time': 'Asia/Taipei',
  'Ulaanbaatar Standard Time': 'Asia/Ulaanbaatar',
  'Tokyo Standard Time': 'Asia/Tokyo',
  'Korea Standard Time': 'Asia/Seoul',
  'Yakutsk Standard Time': 'Asia/Yakutsk',
  'Cen. Australia Standard Time': 'Australia/Adelaide',
  'AUS Central Standard Time': 'Australia/Darwin',
  'E. Australia Standard Time': 'Australia/Brisbane',
  'AUS Eastern Standard Time': 'Australia/Sydney',
  'West Pacific Standard Time': 'Pacific/Port_Moresby',
  'Tasmania Standard Time': 'Australia/Hobart',
  'Vladivostok Standard Time': 'Asia/Vladivostok',
  'New Zealand Standard Time': 'Pacific/Auckland',
  'Fiji Standard Time': 'Pacific/Fiji',
  'Tonga Standard Time': 'Pacific/Tongatapu',
  'Samoa Standard Time': 'Pacific/Apia',
  'Line Islands Standard Time': 'Pacific/Kiritimati',
};
const WINDOWS_BY_LOWER = new Map(Object.entries(WINDOWS_ZONES).map(([k, v]) => [k.toLowerCase(), v]));

/** The IANA zone for a Windows zone name (case-insensitive), e.g. 'SE Asia Standard Time' → 'Asia/Bangkok'; null when unknown. */
export function windowsToIana(name: string): string | null {
  return WINDOWS_BY_LOWER.get(name.trim().toLowerCase()) ?? null;
}

const isIana = (name: string) => IANAZone.isValidZone(name);
const UTC_NAMES = new Set(['utc', 'etc/utc', 'gmt', 'etc/gmt', 'z', 'etc/universal', 'etc/zulu', 'universal', 'zulu']);

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

type Zone = { kind: 'utc' } | { kind: 'floating' } | { kind: 'vtimezone'; tz: ICAL.Timezone } | { kind: 'iana'; name: string };

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

interface Context {
  vtimezones: Map<string, { tz: ICAL.Timezone; location: string | null }>;
  errors: string[];
}

class ItipError extends Error {}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const dateOf = (w: Wall) => `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}`;
const localOf = (w: Wall) => `${dateOf(w)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}`;
const wallOf = (t: ICAL.Time): Wall => ({
  year: t.year,
  month: t.month,
  day: t.day,
  hour: t.isDate ? 0 : t.hour,
  minute: t.isDate ? 0 : t.minute,
  second: t.isDate ? 0 : t.second,
});
const wallUtcMs = (w: Wall) => Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);

function addDays(w: Wall, days: number): Wall {
  const d = new Date(wallUtcMs(w) + days * DAY_MS);
  return { ...w, year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function toEpoch(w: Wall, zone: Zone): number {
  switch (zone.kind) {
    case 'utc':
    case 'floating':
      return wallUtcMs(w);
    case 'vtimezone':
      return new ICAL.Time({ ...w, isDate: false }, zone.tz).toUnixTime() * 1000;
    case 'iana': {
      const dt = DateTime.fromObject(w, { zone: zone.name });
      if (!dt.isValid) throw new ItipError(`cannot place ${localOf(w)} in time zone ${zone.name}`);
      return dt.toMillis();
    }
  }
}

function paramString(prop: ICAL.Property, name: string): string | null {
  const v: unknown = prop.getParameter(name);
  const s: unknown = Array.isArray(v) ? v[0] : v;
  return typeof s === 'string' && s.trim() !== '' ? s.trim() : null;
}

function resolveTzid(tzid: string, ctx: Context, what: string): { zone: Zone; iana: string | null } {
  const own = ctx.vtimezones.get(tzid);
  const windows = windowsToIana(tzid);
  const ianaName = isIana(tzid) ? tzid : windows;
  const iana = ianaName ?? (own?.location && isIana(own.location) ? own.location : null);
  const named = iana && UTC_NAMES.has(iana.toLowerCase()) ? null : iana;
  if (own) return { zone: { kind: 'vtimezone', tz: own.tz }, iana: named };
  if (ianaName) return { zone: UTC_NAMES.has(ianaName.toLowerCase()) ? { kind: 'utc' } : { kind: 'iana', name: ianaName }, iana: named };
  throw new ItipError(`${what}: unknown TZID "${tzid}" (no VTIMEZONE in the message, not an IANA or known Windows zone name)`);
}

interface ReadTime {
  wall: Wall;
  isDate: boolean;
  zone: Zone;
  iana: string | null;
}

function readTimeValue(prop: ICAL.Property, value: unknown, ctx: Context, what: string): ReadTime {
  if (!(value instanceof ICAL.Time)) throw new ItipError(`${what}: not a date or date-time`);
  const wall = wallOf(value);
  if (![wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second].every(Number.isFinite)) {
    throw new ItipError(`${what}: invalid date-time`);
  }
  if (value.isDate) return { wall, isDate: true, zone: { kind: 'floating' }, iana: null };
  const tzid = paramString(prop, 'tzid');
  if (tzid) return { wall, isDate: false, ...resolveTzid(tzid, ctx, what) };
  if (value.zone === ICAL.Timezone.utcTimezone || value.zone?.tzid === 'UTC')
    return { wall, isDate: false, zone: { kind: 'utc' }, iana: null };
  return { wall, isDate: false, zone: { kind: 'floating' }, iana: null };
}

function readTime(prop: ICAL.Property, ctx: Context, what: string): ReadTime {
  return readTimeValue(prop, prop.getFirstValue(), ctx, what);
}

function epochOf(t: ReadTime, what: string): number {
  try {
    const ms = toEpoch(t.wall, t.zone);
    if (!Number.isFinite(ms)) throw new ItipError(`${what}: cannot convert ${localOf(t.wall)}`);
    return ms;
  } catch (e) {
    if (e instanceof ItipError) throw e;
    throw new ItipError(`${what}: cannot convert ${localOf(t.wall)} (${(e as Error).message})`);
  }
}

function normalizeEmail(value: unknown): string {
  return String(value ?? '')
    .trim()
    .replace(/^mailto:/i, '')
    .trim()
    .toLowerCase();
}

function textOf(comp: ICAL.Component, name: string): string | null {
  const v = comp.getFirstPropertyValue(name);
  if (v === null || v === undefined) return null;
  return String(v);
}

/** The largest SEQUENCE: RFC 5545's INTEGER is a signed 32-bit value (3.3.8). */
export const MAX_SEQUENCE = 2_147_483_647;

function parseEvent(ev: ICAL.Component, index: number, ctx: Context): ItipEvent {
  const uid = textOf(ev, 'uid')?.trim() ?? '';
  const label = uid ? `VEVENT ${uid}` : `VEVENT #${index + 1}`;
  const problems: string[] = [];
  if (!uid) problems.push(`${label}: no UID`);
  const dtstartProp = ev.getFirstProperty('dtstart');
  if (!dtstartProp) problems.push(`${label}: no DTSTART`);
  if (problems.length > 0 || !dtstartProp) throw new ItipError(problems.join('; '));

  const startT = readTime(dtstartProp, ctx, `${label} DTSTART`);
  const start = epochOf(startT, `${label} DTSTART`);
  const allDay = startT.isDate;

  const { endT, end } = readEnd(ev, startT, start, ctx, label);
  if (end < start) throw new ItipError(`${label}: DTEND (${localOf(endT.wall)}) is before DTSTART (${localOf(startT.wall)})`);

  const recurrenceProp = ev.getFirstProperty('recurrence-id');
  const recurrenceId = recurrenceProp ? epochOf(readTime(recurrenceProp, ctx, `${label} RECURRENCE-ID`), `${label} RECURRENCE-ID`) : null;

  const stampProp = ev.getFirstProperty('dtstamp');
  const dtstamp = stampProp ? epochOf(readTime(stampProp, ctx, `${label} DTSTAMP`), `${label} DTSTAMP`) : null;

  const seq = readSequence(ev, label);
  const organizerProp = ev.getFirstProperty('organizer');
  const organizer =
    organizerProp && normalizeEmail(organizerProp.getFirstValue())
      ? { email: normalizeEmail(organizerProp.getFirstValue()), name: paramString(organizerProp, 'cn') }
      : null;

  const attendees = readAttendees(ev);

  const rruleProp = ev.getFirstProperty('rrule');
  const rrule = rruleProp ? rruleProp.toICALString().replace(/^RRULE[^:]*:/i, '') : null;

  const exdates = readExdates(ev, ctx, label);

  const floating = startT.zone.kind === 'floating';
  const location = textOf(ev, 'location');
  const status = textOf(ev, 'status');
  return {
    uid,
    recurrenceId,
    sequence: seq,
    dtstamp,
    summary: textOf(ev, 'summary') ?? '',
    description: textOf(ev, 'description') ?? '',
    location: location === null || location.trim() === '' ? null : location,
    start,
    end,
    allDay,
    startDate: allDay ? dateOf(startT.wall) : null,
    endDate: allDay ? dateOf(endT.wall) : null,
    floating,
    startLocal: floating ? localOf(startT.wall) : null,
    endLocal: floating ? localOf(endT.wall) : null,
    timeZone: startT.iana,
    organizer,
    attendees,
    rrule,
    exdates,
    status: status ? status.trim().toUpperCase() : null,
  };
}

/** DTEND, or DTSTART + DURATION; with neither: a timed event ends at its start, an all-day event a day later. */
function readEnd(ev: ICAL.Component, startT: ReadTime, start: number, ctx: Context, label: string): { endT: ReadTime; end: number } {
  const allDay = startT.isDate;
  const dtendProp = ev.getFirstProperty('dtend');
  const durationValue = ev.getFirstPropertyValue('duration');
  if (dtendProp) {
    const endT = readTime(dtendProp, ctx, `${label} DTEND`);
    if (allDay && !endT.isDate) throw new ItipError(`${label}: DTSTART is a DATE but DTEND is a DATE-TIME`);
    if (!allDay && endT.isDate) throw new ItipError(`${label}: DTSTART is a DATE-TIME but DTEND is a DATE`);
    return { endT, end: epochOf(endT, `${label} DTEND`) };
  }
  if (durationValue instanceof ICAL.Duration) {
    // Days and weeks are nominal (wall clock in DTSTART's zone), hours/minutes/seconds exact (RFC 5545 3.3.6).
    const sign = durationValue.isNegative ? -1 : 1;
    const days = sign * (durationValue.weeks * 7 + durationValue.days);
    const exact = sign * (durationValue.hours * 3600 + durationValue.minutes * 60 + durationValue.seconds) * 1000;
    const wall = addDays(startT.wall, days);
    const endT = { ...startT, wall: allDay ? wall : addExact(wall, startT.zone, exact) };
    return { endT, end: allDay ? wallUtcMs(wall) : epochOf({ ...startT, wall }, `${label} DURATION`) + exact };
  }
  return allDay ? { endT: { ...startT, wall: addDays(startT.wall, 1) }, end: start + DAY_MS } : { endT: startT, end: start };
}

function readSequence(ev: ICAL.Component, label: string): number {
  const seq = Number(ev.getFirstPropertyValue('sequence') ?? 0);
  // RFC 5545 3.8.7.4: SEQUENCE is an INTEGER (3.3.8: at most 2147483647) counted up from 0. Anything else is
  // refused rather than clipped, so an ordering never silently changes (docs/decisions.md).
  if (!Number.isInteger(seq) || seq < 0 || seq > MAX_SEQUENCE) {
    throw new ItipError(`${label}: SEQUENCE ${seq} is out of range: RFC 5545 allows a whole number from 0 to ${MAX_SEQUENCE}`);
  }
  return seq;
}

function readAttendees(ev: ICAL.Component): ItipAttendee[] {
  return ev.getAllProperties('attendee').map((p) => ({
    email: normalizeEmail(p.getFirstValue()),
    name: paramString(p, 'cn'),
    partstat: (paramString(p, 'partstat') ?? 'NEEDS-ACTION').toUpperCase(),
    role: paramString(p, 'role')?.toUpperCase() ?? null,
    cutype: paramString(p, 'cutype')?.toUpperCase() ?? null,
  }));
}

/** Every EXDATE instant, in time order. */
function readExdates(ev: ICAL.Component, ctx: Context, label: string): number[] {
  const exdates: number[] = [];
  for (const p of ev.getAllProperties('exdate')) {
    for (const v of p.getValues()) exdates.push(epochOf(readTimeValue(p, v, ctx, `${label} EXDATE`), `${label} EXDATE`));
  }
  exdates.sort((a, b) => a - b);
  return exdates;
}

/** Adds exact milliseconds to a wall-clock time in a zone (floating/UTC: plain arithmetic); used for DURATION's time part. */
function addExact(w: Wall, zone: Zone, ms: number): Wall {
  if (ms === 0) return w;
  if (zone.kind === 'iana') {
    const dt = DateTime.fromObject(w, { zone: zone.name }).plus({ milliseconds: ms });
    return { year: dt.year, month: dt.month, day: dt.day, hour: dt.hour, minute: dt.minute, second: dt.second };
  }
  if (zone.kind === 'vtimezone') {
    const utc = ICAL.Time.fromJSDate(new Date(toEpoch(w, zone) + ms), true).convertToZone(zone.tz);
    return wallOf(utc);
  }
  const d = new Date(wallUtcMs(w) + ms);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
}

/** Parses one iTIP message. Never throws: anything unusable comes back as `{ ok: false, errors }`. */
export function parseItip(text: string): ItipParse {
  try {
    return parseOrThrow(text);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return { ok: false, errors: [e instanceof ItipError ? message : `not valid iCalendar: ${message}`] };
  }
}

function parseOrThrow(text: string): ItipParse {
  if (typeof text !== 'string' || text.trim() === '') return { ok: false, errors: ['empty message: expected an iCalendar VCALENDAR'] };
  const jcal: unknown = ICAL.parse(text.replace(/^\uFEFF/, ''));
  const roots = (Array.isArray(jcal) && typeof jcal[0] === 'string' ? [jcal] : (jcal as unknown[])) as unknown[][];
  const root = roots.find((r) => Array.isArray(r) && r[0] === 'vcalendar');
  if (!root) return { ok: false, errors: ['no VCALENDAR in the message'] };
  const vcal = new ICAL.Component(root);

  const ctx: Context = { vtimezones: new Map(), errors: [] };
  for (const vtz of vcal.getAllSubcomponents('vtimezone')) {
    const tzid = textOf(vtz, 'tzid');
    if (!tzid) continue;
    const location = textOf(vtz, 'x-lic-location')?.trim() || null;
    // A Timezone object of our own (not ICAL.TimezoneService), so nothing leaks between calls.
    if (vtz.getAllSubcomponents('standard').length + vtz.getAllSubcomponents('daylight').length === 0) {
      ctx.errors.push(`VTIMEZONE ${tzid} has neither STANDARD nor DAYLIGHT`);
      continue;
    }
    ctx.vtimezones.set(tzid, { tz: new ICAL.Timezone({ component: vtz, tzid }), location });
  }
  if (ctx.errors.length > 0) return { ok: false, errors: ctx.errors };

  const vevents = vcal.getAllSubcomponents('vevent');
  if (vevents.length === 0) return { ok: false, errors: ['no VEVENT in the VCALENDAR'] };
  const events: ItipEvent[] = [];
  const errors: string[] = [];
  vevents.forEach((ev, i) => {
    try {
      events.push(parseEvent(ev, i, ctx));
    } catch (e) {
      errors.push(e instanceof ItipError ? e.message : `VEVENT #${i + 1}: ${(e as Error).message}`);
    }
  });
  if (errors.length > 0) return { ok: false, errors };

  const ordered = events
    .map((e, i) => ({ e, i }))
    .sort((a, b) => {
      const ka = a.e.recurrenceId ?? -Infinity;
      const kb = b.e.recurrenceId ?? -Infinity;
      return ka === kb ? a.i - b.i : ka - kb;
    })
    .map(({ e }) => e);
  const method = textOf(vcal, 'method');
  const prodId = textOf(vcal, 'prodid');
  return {
    ok: true,
    message: { method: method ? method.trim().toUpperCase() : '', prodId: prodId?.trim() || null, events: ordered },
  };
}

// ---------------------------------------------------------------------------
// REPLY
// ---------------------------------------------------------------------------

const utcTime = (ms: number) => ICAL.Time.fromJSDate(new Date(ms), true);

function mailtoProperty(name: string, email: string, params: Record<string, string | null>): ICAL.Property {
  const prop = new ICAL.Property(name);
  prop.setValue(`mailto:${email.trim().replace(/^mailto:/i, '')}`);
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== '') prop.setParameter(k, v);
  return prop;
}

/** The room's iTIP REPLY: VCALENDAR (VERSION:2.0, PRODID, METHOD:REPLY) with one VEVENT: UID, RECURRENCE-ID?, SEQUENCE, DTSTAMP, DTSTART/DTEND?, SUMMARY?, ORGANIZER (mailto:, CN), ATTENDEE (mailto:room, CN=roomName, PARTSTAT=..., CUTYPE=ROOM), COMMENT (the reason), REQUEST-STATUS 2.0;Success. */
export function buildReply(input: ReplyInput): string {
  const vcal = new ICAL.Component('vcalendar');
  vcal.addPropertyWithValue('prodid', input.prodId ?? DEFAULT_PRODID);
  vcal.addPropertyWithValue('version', '2.0');
  vcal.addPropertyWithValue('method', 'REPLY');

  const ev = new ICAL.Component('vevent');
  ev.addPropertyWithValue('uid', input.uid);
  if (input.recurrenceId !== undefined && input.recurrenceId !== null)
    ev.addPropertyWithValue('recurrence-id', utcTime(input.recurrenceId));
  ev.addPropertyWithValue('sequence', Math.max(0, Math.trunc(input.sequence)));
  ev.addPropertyWithValue('dtstamp', utcTime(input.now));
  if (input.start !== undefined) ev.addPropertyWithValue('dtstart', utcTime(input.start));
  if (input.end !== undefined) ev.addPropertyWithValue('dtend', utcTime(input.end));
  if (input.summary !== undefined && input.summary !== '') ev.addPropertyWithValue('summary', input.summary);
  if (input.organizer) ev.addProperty(mailtoProperty('organizer', input.organizer.email, { cn: input.organizer.name }));
  ev.addProperty(mailtoProperty('attendee', input.roomEmail, { cn: input.roomName, partstat: input.partstat, cutype: 'ROOM' }));
  ev.addPropertyWithValue('comment', input.comment);
  const status = new ICAL.Property('request-status');
  status.setValue(['2.0', 'Success'] as unknown as string);
  ev.addProperty(status);
  vcal.addSubcomponent(ev);
  return `${vcal.toString()}\r\n`;
}

// ---------------------------------------------------------------------------
// Idempotency
// ---------------------------------------------------------------------------

/** sha256 hex of the message unfolded, with CRLF/CR/LF normalized, trailing whitespace of each line and of the text trimmed (DTSTAMP kept). */
export function messageHash(text: string): string {
  const normalized = text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .replace(/\n[ \t]/g, '')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trimEnd();
  return createHash('sha256').update(normalized, 'utf8').digest('hex');
}
