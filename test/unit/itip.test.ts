import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import ICAL from 'ical.js';
import { DateTime, IANAZone } from 'luxon';
import {
  buildReply,
  messageHash,
  parseItip,
  windowsToIana,
  type ItipEvent,
  type ItipMessage,
} from '../../src/modules/calendar-sync/itip.js';
import { GOOGLE_SERIES_UID, GOOGLE_UID, OUTLOOK_UID, icsLocal, icsUtc, loadItip } from '../support/itip.js';

const utc = (iso: string) => Date.parse(iso);

function parsed(text: string): ItipMessage {
  const r = parseItip(text);
  if (!r.ok) throw new Error(r.errors.join('; '));
  return r.message;
}
function only(text: string): ItipEvent {
  const m = parsed(text);
  expect(m.events).toHaveLength(1);
  return m.events[0]!;
}
function errorsOf(text: string): string[] {
  const r = parseItip(text);
  expect(r.ok).toBe(false);
  return r.ok ? [] : r.errors;
}
const stripTimezones = (text: string) => text.replace(/BEGIN:VTIMEZONE\r\n[\s\S]*?END:VTIMEZONE\r\n/g, '');
const withLine = (text: string, after: RegExp, line: string) => text.replace(after, (m) => `${m}${line}\r\n`);
const without = (text: string, line: RegExp) => text.replace(line, '');

const GOOGLE_ATTENDEES = [
  {
    email: 'orchid@rooms.example',
    name: 'Orchid (Floor 3, 8 seats)',
    partstat: 'NEEDS-ACTION',
    role: 'REQ-PARTICIPANT',
    cutype: 'RESOURCE',
  },
  { email: 'ploy.s@corp.example', name: 'Ploy Srisuk', partstat: 'ACCEPTED', role: 'REQ-PARTICIPANT', cutype: 'INDIVIDUAL' },
  { email: 'kenji.w@corp.example', name: 'kenji.w@corp.example', partstat: 'NEEDS-ACTION', role: 'REQ-PARTICIPANT', cutype: 'INDIVIDUAL' },
];
const OUTLOOK_ATTENDEES = [
  { email: 'kenji.w@corp.example', name: 'Kenji Watanabe', partstat: 'NEEDS-ACTION', role: 'REQ-PARTICIPANT', cutype: null },
  { email: 'anong.c@corp.example', name: 'Anong Chaiyaporn', partstat: 'NEEDS-ACTION', role: 'OPT-PARTICIPANT', cutype: null },
  { email: 'orchid@rooms.example', name: 'Orchid', partstat: 'NEEDS-ACTION', role: 'NON-PARTICIPANT', cutype: 'RESOURCE' },
];
const NOT_FLOATING = { floating: false, startLocal: null, endLocal: null, allDay: false, startDate: null, endDate: null };

describe('fixtures', () => {
  it('are CRLF, keep a folded line of at most 75 octets, and have no placeholder left after loading', () => {
    const text = loadItip('outlook-request.ics');
    expect(text).not.toMatch(/[^\r]\n/);
    expect(text).not.toContain('{{');
    const lines = text.split('\r\n');
    const folded = lines.findIndex((l) => l.startsWith(' '));
    expect(folded).toBeGreaterThan(0);
    expect(Buffer.byteLength(lines[folded - 1]!)).toBe(75);
    expect(() => loadItip('outlook-request.ics', {})).not.toThrow();
  });

  it('loadItip replaces the placeholders it is given', () => {
    const text = loadItip('utc-request.ics', {
      UID: 'abc-1',
      START: '20300102T030405',
      END: '20300102T040405',
      SEQ: '7',
      ROOM: 'lotus@rooms.example',
    });
    expect(text).toContain('UID:abc-1\r\n');
    expect(text).toContain('DTSTART:20300102T030405Z\r\n');
    expect(text).toContain('SEQUENCE:7\r\n');
    expect(text).toContain('MAILTO:lotus@rooms.example');
  });
});

describe('parseItip: Outlook / Exchange', () => {
  it('outlook-request.ics: Windows TZID with its VTIMEZONE, X-MICROSOFT-* ignored', () => {
    const m = parsed(loadItip('outlook-request.ics'));
    expect(m.method).toBe('REQUEST');
    expect(m.prodId).toBe('Microsoft Exchange Server 2010');
    expect(m.events).toEqual([
      {
        uid: OUTLOOK_UID,
        recurrenceId: null,
        sequence: 0,
        dtstamp: utc('2026-11-25T05:00:00Z'),
        summary: 'Vendor review',
        description:
          'Agenda: review the vendor shortlist for the new booking panels, agree on the pilot floors and the rollout calendar, then walk through the open questions from procurement.\n\nPlease bring the figures from last quarter.\n',
        location: 'Orchid',
        start: utc('2026-12-01T03:00:00Z'),
        end: utc('2026-12-01T04:00:00Z'),
        ...NOT_FLOATING,
        timeZone: 'Asia/Bangkok',
        organizer: { email: 'somchai.r@corp.example', name: 'Somchai Rattanakul' },
        attendees: OUTLOOK_ATTENDEES,
        rrule: null,
        exdates: [],
        status: 'CONFIRMED',
      } satisfies ItipEvent,
    ]);
  });

  it('outlook-update.ics: same UID, SEQUENCE 1, new times', () => {
    const e = only(loadItip('outlook-update.ics'));
    expect(e.uid).toBe(OUTLOOK_UID);
    expect(e.sequence).toBe(1);
    expect([e.start, e.end]).toEqual([utc('2026-12-01T07:00:00Z'), utc('2026-12-01T08:30:00Z')]);
  });

  it('outlook-cancel.ics: METHOD:CANCEL, STATUS:CANCELLED', () => {
    const m = parsed(loadItip('outlook-cancel.ics'));
    expect(m.method).toBe('CANCEL');
    expect(m.events[0]).toMatchObject({ uid: OUTLOOK_UID, sequence: 2, status: 'CANCELLED', summary: 'Canceled: Vendor review' });
  });

  it('room-declined-reply.ics: METHOD:REPLY, the room declines', () => {
    const m = parsed(loadItip('room-declined-reply.ics'));
    expect(m.method).toBe('REPLY');
    expect(m.events[0]).toMatchObject({ uid: OUTLOOK_UID, organizer: null, status: null, start: utc('2026-12-01T03:00:00Z') });
    expect(m.events[0]!.attendees).toEqual([
      { email: 'orchid@rooms.example', name: 'Orchid', partstat: 'DECLINED', role: null, cutype: null },
    ]);
  });
});

describe('parseItip: Google', () => {
  it('google-request.ics: IANA TZID with VTIMEZONE, quoted CN, X-GOOGLE-CONFERENCE ignored', () => {
    const m = parsed(loadItip('google-request.ics'));
    expect(m.method).toBe('REQUEST');
    expect(m.prodId).toBe('-//Google Inc//Google Calendar 70.9054//EN');
    const e = m.events[0]!;
    expect(m.events).toHaveLength(1);
    expect(e).toMatchObject({
      uid: GOOGLE_UID,
      recurrenceId: null,
      sequence: 0,
      dtstamp: utc('2026-11-25T05:00:00Z'),
      summary: 'Quarterly planning',
      location: 'Orchid (Floor 3, 8 seats)',
      start: utc('2026-12-01T03:00:00Z'),
      end: utc('2026-12-01T04:00:00Z'),
      ...NOT_FLOATING,
      timeZone: 'Asia/Bangkok',
      organizer: { email: 'ploy.s@corp.example', name: 'Ploy Srisuk' },
      rrule: null,
      exdates: [],
      status: 'CONFIRMED',
    });
    expect(e.attendees).toEqual(GOOGLE_ATTENDEES);
    expect(e.description).toContain('Join with Google Meet: https://meet.google.com/abc-defg-hij\n');
    expect(e.description).toMatch(/-::~:~::~(:~)+::~:~::-$/);
  });

  it('google-recurring.ics: RRULE as written', () => {
    const e = only(loadItip('google-recurring.ics'));
    expect(e).toMatchObject({
      uid: GOOGLE_SERIES_UID,
      rrule: 'FREQ=WEEKLY;BYDAY=MO;COUNT=4',
      recurrenceId: null,
      start: utc('2026-12-07T03:00:00Z'),
    });
    const odd = only(
      loadItip('google-recurring.ics').replace(
        'RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=4',
        'RRULE:FREQ=WEEKLY;WKST=SU;INTERVAL=1;UNTIL=20261228T030000Z;BYDAY=MO,WE',
      ),
    );
    expect(odd.rrule).toBe('FREQ=WEEKLY;WKST=SU;INTERVAL=1;UNTIL=20261228T030000Z;BYDAY=MO,WE');
  });

  it('google-recurring.ics with EXDATEs (one property, two values, and a UTC one)', () => {
    let text = withLine(loadItip('google-recurring.ics'), /RRULE:[^\r]*\r\n/, 'EXDATE;TZID=Asia/Bangkok:20261221T100000,20261214T100000');
    text = withLine(text, /RRULE:[^\r]*\r\n/, 'EXDATE:20261228T030000Z');
    expect(only(text).exdates).toEqual([utc('2026-12-14T03:00:00Z'), utc('2026-12-21T03:00:00Z'), utc('2026-12-28T03:00:00Z')]);
  });

  it('google-instance-move.ics: an override with RECURRENCE-ID', () => {
    const m = parsed(loadItip('google-instance-move.ics'));
    expect(m.method).toBe('REQUEST');
    expect(m.events[0]).toMatchObject({
      uid: GOOGLE_SERIES_UID,
      sequence: 1,
      recurrenceId: utc('2026-12-14T03:00:00Z'),
      start: utc('2026-12-15T04:00:00Z'),
      end: utc('2026-12-15T05:00:00Z'),
      rrule: null,
    });
  });

  it('google-instance-cancel.ics: METHOD:CANCEL with RECURRENCE-ID', () => {
    const m = parsed(loadItip('google-instance-cancel.ics'));
    expect(m.method).toBe('CANCEL');
    expect(m.events[0]).toMatchObject({ recurrenceId: utc('2026-12-21T03:00:00Z'), status: 'CANCELLED', sequence: 1 });
  });

  it('orders events: master first, then overrides by RECURRENCE-ID', () => {
    const event = (name: string, vars: Record<string, string>) => loadItip(name, vars).match(/BEGIN:VEVENT\r\n[\s\S]*END:VEVENT\r\n/)![0];
    const master = event('google-recurring.ics', {});
    const late = event('google-instance-move.ics', { RECURRENCE_ID: '20261228T100000', START: '20261228T150000', END: '20261228T160000' });
    const early = event('google-instance-move.ics', { RECURRENCE_ID: '20261214T100000' });
    const text = loadItip('google-recurring.ics').replace(master, `${late}${early}${master}`);
    const m = parsed(text);
    expect(m.events.map((e) => e.recurrenceId)).toEqual([null, utc('2026-12-14T03:00:00Z'), utc('2026-12-28T03:00:00Z')]);
    expect(m.events[0]!.rrule).toBe('FREQ=WEEKLY;BYDAY=MO;COUNT=4');
  });

  it('google-allday.ics: VALUE=DATE', () => {
    const e = only(loadItip('google-allday.ics', { START_DATE: '20261231', END_DATE: '20270102' }));
    expect(e).toMatchObject({
      allDay: true,
      floating: true,
      startDate: '2026-12-31',
      endDate: '2027-01-02',
      start: utc('2026-12-31T00:00:00Z'),
      end: utc('2027-01-02T00:00:00Z'),
      startLocal: '2026-12-31T00:00:00',
      endLocal: '2027-01-02T00:00:00',
      timeZone: null,
      summary: 'Offsite prep day',
    });
  });

  it('all-day without DTEND lasts one day; with DURATION:P2D two', () => {
    const base = loadItip('google-allday.ics');
    const noEnd = only(without(base, /DTEND;VALUE=DATE:[^\r]*\r\n/));
    expect([noEnd.endDate, noEnd.end - noEnd.start]).toEqual(['2026-12-02', 86_400_000]);
    const twoDays = only(base.replace(/DTEND;VALUE=DATE:[^\r]*/, 'DURATION:P2D'));
    expect([twoDays.endDate, twoDays.endLocal]).toEqual(['2026-12-03', '2026-12-03T00:00:00']);
  });
});

describe('parseItip: UTC and floating', () => {
  it('utc-request.ics: times in Z, MAILTO: upper-case stripped, CUTYPE=ROOM', () => {
    const m = parsed(loadItip('utc-request.ics'));
    expect(m.prodId).toBe('-//Example Scheduler//Booking Bot 1.4//EN');
    expect(m.events[0]).toMatchObject({
      start: utc('2026-12-01T03:00:00Z'),
      end: utc('2026-12-01T04:00:00Z'),
      ...NOT_FLOATING,
      timeZone: null,
      organizer: { email: 'dara.o@corp.example', name: 'Dara Okafor' },
    });
    expect(m.events[0]!.attendees.map((a) => [a.email, a.cutype, a.role, a.partstat])).toEqual([
      ['orchid@rooms.example', 'ROOM', 'NON-PARTICIPANT', 'NEEDS-ACTION'],
      ['dara.o@corp.example', 'INDIVIDUAL', 'CHAIR', 'ACCEPTED'],
    ]);
  });

  it('floating.ics: no Z, no TZID → computed as if UTC, wall clock given', () => {
    const e = only(loadItip('floating.ics', { START: '20261201T093000', END: '20261201T101500' }));
    expect(e).toMatchObject({
      floating: true,
      allDay: false,
      startLocal: '2026-12-01T09:30:00',
      endLocal: '2026-12-01T10:15:00',
      start: utc('2026-12-01T09:30:00Z'),
      end: utc('2026-12-01T10:15:00Z'),
      timeZone: null,
      startDate: null,
      endDate: null,
      organizer: { email: 'ploy.s@corp.example', name: null },
      status: null,
      location: null,
      description: '',
      rrule: null,
    });
  });

  it('defaults: no SEQUENCE → 0, no SUMMARY → "", no METHOD → "", no PRODID → null, PARTSTAT absent → NEEDS-ACTION', () => {
    let text = loadItip('floating.ics');
    for (const re of [/SEQUENCE:[^\r]*\r\n/, /SUMMARY:[^\r]*\r\n/, /METHOD:[^\r]*\r\n/, /PRODID:[^\r]*\r\n/]) text = without(text, re);
    text = text.replace('PARTSTAT=NEEDS-ACTION;', '');
    const m = parsed(text);
    expect([m.method, m.prodId, m.events[0]!.sequence, m.events[0]!.summary, m.events[0]!.attendees[0]!.partstat]).toEqual([
      '',
      null,
      0,
      '',
      'NEEDS-ACTION',
    ]);
  });

  it('SEQUENCE is a whole number from 0 to 2147483647 (RFC 5545 INTEGER); outside it the message is refused', () => {
    const base = loadItip('floating.ics');
    const withSeq = (v: string) => base.replace(/SEQUENCE:[^\r]*/, `SEQUENCE:${v}`);
    expect(base).toMatch(/SEQUENCE:/);
    for (const ok of ['0', '7', '2147483647']) expect(only(withSeq(ok)).sequence).toBe(Number(ok));
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 2_147_483_648, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: -1 })),
        (n) => {
          const errors = errorsOf(withSeq(String(n)));
          expect(errors).toHaveLength(1);
          expect(errors[0]).toMatch(new RegExp(`SEQUENCE ${n} is out of range: RFC 5545 allows a whole number from 0 to 2147483647$`));
        },
      ),
      { numRuns: 50 },
    );
    expect(errorsOf(withSeq('99999999999999999999'))[0]).toMatch(/SEQUENCE 100000000000000000000 is out of range/);
  });

  it('timed event without DTEND ends at its start; DURATION is added', () => {
    const base = loadItip('utc-request.ics');
    const e = only(without(base, /DTEND:[^\r]*\r\n/));
    expect(e.end).toBe(e.start);
    const d = only(base.replace(/DTEND:[^\r]*/, 'DURATION:PT1H30M'));
    expect(d.end - d.start).toBe(90 * 60_000);
    const f = only(loadItip('floating.ics').replace(/DTEND:[^\r]*/, 'DURATION:PT45M'));
    expect(f.endLocal).toBe('2026-12-01T10:45:00');
  });

  it('method and status are upper-cased, other methods pass through', () => {
    const m = parsed(
      loadItip('utc-request.ics').replace('METHOD:REQUEST', 'METHOD:counter').replace('STATUS:CONFIRMED', 'STATUS:tentative'),
    );
    expect([m.method, m.events[0]!.status]).toEqual(['COUNTER', 'TENTATIVE']);
  });
});

describe('time zones across DST (America/New_York: 8 March and 1 November 2026)', () => {
  const cases: Array<[string, string, string, string]> = [
    // wall start, wall end, UTC start, UTC end
    ['20260307T100000', '20260307T110000', '2026-03-07T15:00:00Z', '2026-03-07T16:00:00Z'],
    ['20260309T100000', '20260309T110000', '2026-03-09T14:00:00Z', '2026-03-09T15:00:00Z'],
    ['20260308T010000', '20260308T040000', '2026-03-08T06:00:00Z', '2026-03-08T08:00:00Z'], // spans the spring gap: 2 h
    ['20261031T100000', '20261031T110000', '2026-10-31T14:00:00Z', '2026-10-31T15:00:00Z'],
    ['20261102T100000', '20261102T110000', '2026-11-02T15:00:00Z', '2026-11-02T16:00:00Z'],
    ['20261101T000000', '20261101T030000', '2026-11-01T04:00:00Z', '2026-11-01T08:00:00Z'], // spans the autumn overlap: 4 h
  ];
  const styles: Array<[string, (vars: Record<string, string>) => string]> = [
    ['Outlook VTIMEZONE "Eastern Standard Time"', (v) => loadItip('outlook-request-eastern.ics', v)],
    ['Google VTIMEZONE America/New_York', (v) => loadItip('google-request-new-york.ics', v)],
    ['IANA TZID without VTIMEZONE (luxon)', (v) => stripTimezones(loadItip('google-request-new-york.ics', v))],
    ['Windows TZID without VTIMEZONE (mapped, luxon)', (v) => stripTimezones(loadItip('outlook-request-eastern.ics', v))],
  ];
  for (const [style, load] of styles) {
    it(style, () => {
      for (const [START, END, s, e] of cases) {
        const ev = only(load({ START, END }));
        expect([new Date(ev.start).toISOString(), new Date(ev.end).toISOString()], `${START}–${END}`).toEqual([
          new Date(s).toISOString(),
          new Date(e).toISOString(),
        ]);
        expect(ev.timeZone).toBe('America/New_York');
        expect(ev.floating).toBe(false);
      }
    });
  }

  it('DURATION:P1D across the spring change is a calendar day (23 h)', () => {
    const ev = only(loadItip('outlook-request-eastern.ics', { START: '20260307T100000' }).replace(/DTEND;[^\r]*/, 'DURATION:P1D'));
    expect(ev.end).toBe(utc('2026-03-08T14:00:00Z'));
  });

  it('both VTIMEZONE styles agree with luxon on random wall-clock times (2026–2032)', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2026-01-01T00:00:00Z'), max: new Date('2032-12-31T00:00:00Z'), noInvalidDate: true }),
        fc.integer({ min: 4, max: 22 }),
        fc.integer({ min: 0, max: 59 }),
        (day, hour, minute) => {
          const wall = DateTime.fromJSDate(day, { zone: 'UTC' }).set({ hour, minute, second: 0, millisecond: 0 });
          const START = wall.toFormat("yyyyLLdd'T'HHmmss");
          const END = wall.plus({ hours: 1 }).toFormat("yyyyLLdd'T'HHmmss");
          const expected = DateTime.fromObject(wall.toObject(), { zone: 'America/New_York' }).toMillis();
          expect(only(loadItip('outlook-request-eastern.ics', { START, END })).start).toBe(expected);
          expect(only(loadItip('google-request-new-york.ics', { START, END })).start).toBe(expected);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('time zone names', () => {
  it('maps the common Windows names to IANA zones luxon knows', () => {
    const expected: Record<string, string> = {
      'SE Asia Standard Time': 'Asia/Bangkok',
      'Singapore Standard Time': 'Asia/Singapore',
      'Tokyo Standard Time': 'Asia/Tokyo',
      'China Standard Time': 'Asia/Shanghai',
      'India Standard Time': 'Asia/Kolkata',
      'GMT Standard Time': 'Europe/London',
      'W. Europe Standard Time': 'Europe/Berlin',
      'Romance Standard Time': 'Europe/Paris',
      'Central Europe Standard Time': 'Europe/Budapest',
      'Eastern Standard Time': 'America/New_York',
      'Central Standard Time': 'America/Chicago',
      'Mountain Standard Time': 'America/Denver',
      'Pacific Standard Time': 'America/Los_Angeles',
      'AUS Eastern Standard Time': 'Australia/Sydney',
    };
    for (const [win, iana] of Object.entries(expected)) {
      expect(windowsToIana(win)).toBe(iana);
      expect(windowsToIana(win.toUpperCase())).toBe(iana);
      expect(IANAZone.isValidZone(iana)).toBe(true);
    }
    expect(windowsToIana('Mars Standard Time')).toBeNull();
  });

  it('Windows TZID without VTIMEZONE is converted through the mapped zone', () => {
    const text = stripTimezones(loadItip('outlook-request.ics')).replaceAll('SE Asia Standard Time', 'Tokyo Standard Time');
    expect(only(text)).toMatchObject({ start: utc('2026-12-01T01:00:00Z'), timeZone: 'Asia/Tokyo' });
  });

  it('custom TZID: converted by its VTIMEZONE; zone from X-LIC-LOCATION, else null', () => {
    // Older Outlook: the display name as TZID, quoted in parameters (it holds ':' and ',').
    const custom = loadItip('outlook-request.ics')
      .replaceAll('TZID=SE Asia Standard Time', 'TZID="(UTC+07:00) Bangkok, Hanoi, Jakarta"')
      .replace('TZID:SE Asia Standard Time', 'TZID:(UTC+07:00) Bangkok, Hanoi, Jakarta');
    expect(only(custom)).toMatchObject({ start: utc('2026-12-01T03:00:00Z'), timeZone: null });
    const located = custom.replace(
      'TZID:(UTC+07:00) Bangkok, Hanoi, Jakarta\r\n',
      'TZID:(UTC+07:00) Bangkok, Hanoi, Jakarta\r\nX-LIC-LOCATION:Asia/Jakarta\r\n',
    );
    expect(only(located)).toMatchObject({ start: utc('2026-12-01T03:00:00Z'), timeZone: 'Asia/Jakarta' });
  });

  it('the VTIMEZONE wins over the name: a message whose VTIMEZONE says +09:00 is read at +09:00', () => {
    const text = loadItip('outlook-request.ics').replaceAll('+0700', '+0900');
    expect(only(text).start).toBe(utc('2026-12-01T01:00:00Z'));
  });

  it('parsing does not leak zones between calls', () => {
    only(loadItip('outlook-request.ics').replaceAll('SE Asia Standard Time', 'Custom Zone A'));
    const errs = errorsOf(stripTimezones(loadItip('outlook-request.ics')).replaceAll('SE Asia Standard Time', 'Custom Zone A'));
    expect(errs.join()).toMatch(/unknown TZID "Custom Zone A"/);
  });
});

describe('errors (never thrown)', () => {
  const base = loadItip('utc-request.ics');
  it.each([
    ['empty', '', /empty message/],
    ['not iCalendar', 'hello, this is not a calendar', /not valid iCalendar/],
    ['no VCALENDAR', 'BEGIN:VEVENT\r\nUID:x\r\nDTSTART:20261201T100000Z\r\nEND:VEVENT\r\n', /no VCALENDAR/],
    ['no VEVENT', 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nMETHOD:REQUEST\r\nEND:VCALENDAR\r\n', /no VEVENT/],
    ['no UID', without(base, /UID:[^\r]*\r\n/), /VEVENT #1: no UID/],
    ['no DTSTART', without(base, /DTSTART:[^\r]*\r\n/), /no DTSTART/],
    ['DTEND before DTSTART', base.replace(/DTEND:[^\r]*/, 'DTEND:20261201T020000Z'), /DTEND \(2026-12-01T02:00:00\) is before DTSTART/],
    ['unknown TZID', base.replace(/DTSTART:([^\r]*)Z/, 'DTSTART;TZID=Mars Standard Time:$1'), /unknown TZID "Mars Standard Time"/],
    ['bad date', base.replace(/DTSTART:[^\r]*/, 'DTSTART:2026-12-01'), /./],
  ])('%s', (_, text, message) => {
    expect(errorsOf(text).join('\n')).toMatch(message);
  });

  it('no input makes parseItip throw', () => {
    const lines = loadItip('google-recurring.ics').split('\r\n');
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(() => parseItip(s)).not.toThrow();
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: lines.length - 1 }), fc.string({ maxLength: 20 }), (i, junk) => {
        const mutated = [...lines.slice(0, i), junk, ...lines.slice(i + 1)].join('\r\n');
        expect(() => parseItip(mutated)).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });
});

describe('random instants round-trip through a UTC REQUEST', () => {
  it('start and end come back to the second', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2000, 0, 1) / 1000, max: Date.UTC(2099, 11, 31) / 1000 }),
        fc.integer({ min: 0, max: 86_400 * 3 }),
        (s, dur) => {
          const start = s * 1000;
          const end = start + dur * 1000;
          const e = only(loadItip('utc-request.ics', { START: icsLocal(start, 'UTC'), END: icsLocal(end, 'UTC'), DTSTAMP: icsUtc(start) }));
          expect([e.start, e.end, e.dtstamp]).toEqual([start, end, start]);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('buildReply', () => {
  const input = {
    uid: GOOGLE_SERIES_UID,
    recurrenceId: utc('2026-12-14T03:00:00Z'),
    sequence: 3,
    summary: 'Weekly stand-up',
    start: utc('2026-12-15T04:00:00Z'),
    end: utc('2026-12-15T05:00:00Z'),
    roomEmail: 'orchid@rooms.example',
    roomName: 'Orchid, Floor 3',
    organizer: { email: 'ploy.s@corp.example', name: 'Ploy Srisuk' },
    partstat: 'DECLINED' as const,
    comment: 'Orchid is booked from 11:00 to 12:00 that day; the room is not free, sorry (long enough to be folded across lines).',
    now: utc('2026-11-25T05:00:00Z'),
  };

  it('is proper iCalendar: CRLF, folded, read back by ical.js', () => {
    const text = buildReply(input);
    expect(text).not.toMatch(/[^\r]\n/);
    expect(text.endsWith('END:VCALENDAR\r\n')).toBe(true);
    const lines = text.split('\r\n');
    expect(lines.some((l) => l.startsWith(' '))).toBe(true);
    // ical.js folds after 75 octets of content; a continuation line carries its leading space on top.
    for (const l of lines) expect(Buffer.byteLength(l)).toBeLessThanOrEqual(76);

    const vcal = new ICAL.Component(ICAL.parse(text));
    expect(vcal.getFirstPropertyValue('version')).toBe('2.0');
    expect(vcal.getFirstPropertyValue('method')).toBe('REPLY');
    expect(vcal.getFirstPropertyValue('prodid')).toBe('-//Room and Desk Booking Service//Calendar sync//EN');
    const events = vcal.getAllSubcomponents('vevent');
    expect(events).toHaveLength(1);
    const ev = events[0]!;
    expect(ev.getFirstPropertyValue('uid')).toBe(GOOGLE_SERIES_UID);
    expect(ev.getFirstPropertyValue('sequence')).toBe(3);
    expect(ev.getFirstPropertyValue('comment')).toBe(input.comment);
    expect(ev.getFirstPropertyValue('summary')).toBe('Weekly stand-up');
    expect(ev.getFirstProperty('request-status')!.toICALString()).toBe('REQUEST-STATUS:2.0;Success');
    const rid = ev.getFirstPropertyValue('recurrence-id') as ICAL.Time;
    expect([rid.toString(), rid.zone.tzid]).toEqual(['2026-12-14T03:00:00Z', 'UTC']);
    expect(lines).toContain('RECURRENCE-ID:20261214T030000Z');
    expect(lines).toContain('DTSTAMP:20261125T050000Z');
    expect(lines).toContain('DTSTART:20261215T040000Z');
    const att = ev.getFirstProperty('attendee')!;
    expect(att.getFirstValue()).toBe('mailto:orchid@rooms.example');
    expect([att.getParameter('partstat'), att.getParameter('cutype'), att.getParameter('cn')]).toEqual([
      'DECLINED',
      'ROOM',
      'Orchid, Floor 3',
    ]);
    const org = ev.getFirstProperty('organizer')!;
    expect([org.getFirstValue(), org.getParameter('cn')]).toEqual(['mailto:ploy.s@corp.example', 'Ploy Srisuk']);
  });

  it('parses back with parseItip', () => {
    const m = parsed(buildReply(input));
    expect(m.method).toBe('REPLY');
    expect(m.events[0]).toMatchObject({
      uid: input.uid,
      recurrenceId: input.recurrenceId,
      sequence: 3,
      start: input.start,
      end: input.end,
      dtstamp: input.now,
      organizer: input.organizer,
      attendees: [{ email: 'orchid@rooms.example', name: 'Orchid, Floor 3', partstat: 'DECLINED', role: null, cutype: 'ROOM' }],
    });
  });

  it('leaves out what it is not given', () => {
    const text = buildReply({
      uid: 'u-1',
      sequence: 0,
      roomEmail: 'Lotus@Rooms.Example',
      roomName: 'Lotus',
      organizer: null,
      partstat: 'ACCEPTED',
      comment: 'Accepted',
      now: 0,
      prodId: '-//Test//EN',
    });
    expect(text).not.toMatch(/RECURRENCE-ID|DTSTART|DTEND|SUMMARY|ORGANIZER/);
    expect(text).toContain('PRODID:-//Test//EN\r\n');
    expect(text).toContain('COMMENT:Accepted\r\n');
    expect(text).toContain('ATTENDEE;CN=Lotus;PARTSTAT=ACCEPTED;CUTYPE=ROOM:mailto:Lotus@Rooms.Example\r\n');
  });

  it('round trip keeps uid, sequence, partstat and comment (property)', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 200 }).filter((s) => !/[\u0000-\u001f\u007f]/.test(s));
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9@._-]{1,80}$/),
        fc.nat({ max: 10_000 }),
        fc.constantFrom('ACCEPTED' as const, 'DECLINED' as const),
        text,
        text.filter((s) => s.trim() !== ''),
        fc.option(fc.integer({ min: Date.UTC(2000, 0, 1) / 1000, max: Date.UTC(2099, 0, 1) / 1000 }), { nil: null }),
        (uid, sequence, partstat, comment, roomName, rid) => {
          const reply = buildReply({
            ...input,
            uid,
            sequence,
            partstat,
            comment,
            roomName,
            recurrenceId: rid === null ? null : rid * 1000,
          });
          const e = only(reply);
          expect([e.uid, e.sequence, e.attendees[0]!.partstat, e.attendees[0]!.name, e.recurrenceId]).toEqual([
            uid,
            sequence,
            partstat,
            roomName.trim(),
            rid === null ? null : rid * 1000,
          ]);
          const vevent = new ICAL.Component(ICAL.parse(reply)).getFirstSubcomponent('vevent')!;
          expect(vevent.getFirstPropertyValue('comment')).toBe(comment);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('messageHash', () => {
  const crlf = loadItip('outlook-request.ics');
  it('is sha256 hex and the same for CRLF, LF, unfolded text and trailing whitespace', () => {
    const h = messageHash(crlf);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(messageHash(crlf.replace(/\r\n/g, '\n'))).toBe(h);
    expect(messageHash(crlf.replace(/\r\n /g, ''))).toBe(h);
    expect(messageHash(`${crlf.replace(/\r\n(?! )/g, ' \t\r\n')}\r\n\r\n`)).toBe(h);
  });
  it('changes with the content, DTSTAMP included', () => {
    const h = messageHash(crlf);
    expect(messageHash(loadItip('outlook-request.ics', { DTSTAMP: '20261125T050001Z' }))).not.toBe(h);
    expect(messageHash(loadItip('outlook-update.ics'))).not.toBe(h);
  });
});
