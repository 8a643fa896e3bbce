/**
 * iTIP fixtures (test/fixtures/itip/*.ics, CRLF, folded like real mail) with
 * `{{VAR}}` placeholders, so tests can put the meetings wherever they need them.
 *
 *   loadItip('google-request.ics', { START: icsLocal(ms, 'Asia/Bangkok'), END: … })
 *
 * Placeholders: UID, SEQ, DTSTAMP (UTC, with Z), START / END (wall clock
 * 'YYYYMMDDTHHmmss' in the fixture's zone: SE Asia Standard Time / Asia/Bangkok
 * (UTC+7), Eastern / America/New_York for the *-eastern / *-new-york files, UTC
 * for utc-request (the fixture adds the Z), none for floating), START_DATE /
 * END_DATE ('YYYYMMDD', google-allday), RECURRENCE_ID (wall clock, the
 * google-instance-* files), ROOM and ORGANIZER (emails).
 * Every placeholder has a default (DEFAULTS, then FIXTURE_DEFAULTS[name]); an
 * unknown `{{NAME}}` left in the text throws.
 */
import { readFileSync } from 'node:fs';
import { DateTime } from 'luxon';

const DIR = new URL('../fixtures/itip/', import.meta.url);

export const OUTLOOK_UID =
  '040000008200E00074C5B7101A82E00800000000B0C4F1A7F35FDC010000000000000000100000009D5E8A3C1B7F4E2A8C6D0F1E2B3A4C5D';
export const GOOGLE_UID = '6p3k1m9q2r7s4t0v8w5x2y1z3a@google.com';
export const GOOGLE_SERIES_UID = '0c8n2b6v4x1z9l7k5j3h1g0f2d@google.com';

export const DEFAULTS: Record<string, string> = {
  UID: 'fixture-0001@example.test',
  SEQ: '0',
  DTSTAMP: '20261125T050000Z',
  START: '20261201T100000',
  END: '20261201T110000',
  START_DATE: '20261201',
  END_DATE: '20261202',
  RECURRENCE_ID: '20261214T100000',
  ROOM: 'orchid@rooms.example',
  ORGANIZER: 'ploy.s@corp.example',
};

export const FIXTURE_DEFAULTS: Record<string, Record<string, string>> = {
  'outlook-request.ics': { UID: OUTLOOK_UID, ORGANIZER: 'somchai.r@corp.example' },
  'outlook-request-eastern.ics': { UID: OUTLOOK_UID, ORGANIZER: 'somchai.r@corp.example' },
  'outlook-update.ics': {
    UID: OUTLOOK_UID,
    ORGANIZER: 'somchai.r@corp.example',
    SEQ: '1',
    START: '20261201T140000',
    END: '20261201T153000',
  },
  'outlook-cancel.ics': { UID: OUTLOOK_UID, ORGANIZER: 'somchai.r@corp.example', SEQ: '2' },
  'room-declined-reply.ics': { UID: OUTLOOK_UID, ORGANIZER: 'somchai.r@corp.example' },
  'google-request.ics': { UID: GOOGLE_UID },
  'google-request-new-york.ics': { UID: GOOGLE_UID },
  // Mondays 7, 14, 21, 28 December 2026, 10:00–11:00 Bangkok.
  'google-recurring.ics': { UID: GOOGLE_SERIES_UID, START: '20261207T100000', END: '20261207T110000' },
  // The 14 December occurrence moved to Tuesday 15 December, 11:00–12:00.
  'google-instance-move.ics': {
    UID: GOOGLE_SERIES_UID,
    SEQ: '1',
    RECURRENCE_ID: '20261214T100000',
    START: '20261215T110000',
    END: '20261215T120000',
  },
  'google-instance-cancel.ics': {
    UID: GOOGLE_SERIES_UID,
    SEQ: '1',
    RECURRENCE_ID: '20261221T100000',
    START: '20261221T100000',
    END: '20261221T110000',
  },
  'google-allday.ics': { UID: 'allday-4d7f1a2b9c@google.com' },
  'utc-request.ics': {
    UID: 'bot-7f3a9e21@scheduler.example',
    ORGANIZER: 'dara.o@corp.example',
    START: '20261201T030000',
    END: '20261201T040000',
  },
  'floating.ics': { UID: 'legacy-1c9e55@groupware.example' },
};

/** The fixture's text (CRLF kept) with its `{{VAR}}` placeholders replaced. */
export function loadItip(name: string, vars: Record<string, string> = {}): string {
  const raw = readFileSync(new URL(name, DIR), 'utf8');
  const all = { ...DEFAULTS, ...FIXTURE_DEFAULTS[name], ...vars };
  return raw.replace(/\{\{([A-Z_]+)\}\}/g, (_, key: string) => {
    const value = all[key];
    if (value === undefined) throw new Error(`${name}: no value for {{${key}}}`);
    return value;
  });
}

/** 'YYYYMMDDTHHmmss' wall clock of an instant in a zone (for START / END / RECURRENCE_ID). */
export const icsLocal = (ms: number, zone: string) => DateTime.fromMillis(ms, { zone }).toFormat("yyyyLLdd'T'HHmmss");
/** 'YYYYMMDDTHHmmssZ' (for DTSTAMP). */
export const icsUtc = (ms: number) => `${icsLocal(ms, 'UTC')}Z`;
/** 'YYYYMMDD' (for START_DATE / END_DATE). */
export const icsDate = (iso: string) => iso.replaceAll('-', '');
