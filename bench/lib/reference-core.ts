/**
 * What the lean reference servers (bench/reference-server.ts on SQLite,
 * bench/lib/pg-reference.ts on PostgreSQL) share: ids, sealed PINs, the rules of
 * a create on the project's wall clock (without luxon: the zone's UTC offset is
 * read once per quarter hour through Intl and cached), the lifecycle timers, the
 * request schema, the bearer-token check against a cache of token rows, and the
 * shapes of the event, the delivery and the answer.
 *
 * Nothing here is a shortcut the service could not take: every rule is applied,
 * every secret compared in constant time, every input validated.
 */
import { createCipheriv, createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

export const ENV = 'development';
export const MINUTE = 60_000;

// ---------------------------------------------------------------------------
// Ids (the service's layout: seconds, 5 random bytes, counter) and sealed PINs
// ---------------------------------------------------------------------------

const processRandom = randomBytes(5);
const idBuf = Buffer.alloc(12);
processRandom.copy(idBuf, 4);
let counter = randomInt(0xffffff);
export function newId(now: number): string {
  idBuf.writeUInt32BE(Math.floor(now / 1000) >>> 0, 0);
  counter = (counter + 1) & 0xffffff;
  idBuf.writeUIntBE(counter, 9, 3);
  return idBuf.toString('hex');
}

const sealKey = randomBytes(32);
/** AES-256-GCM, as the service seals a booking's PIN. */
export function seal(plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `v1.${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${body.toString('base64url')}`;
}

export const newPin = () => String(randomInt(0, 1_000_000)).padStart(6, '0');
export const sha256 = (s: string) => createHash('sha256').update(s).digest();

// ---------------------------------------------------------------------------
// The project's wall clock
// ---------------------------------------------------------------------------

const QUARTER = 15 * MINUTE;
const formats = new Map<string, Intl.DateTimeFormat>();
const offsets = new Map<string, number>();

/** The zone's UTC offset (ms) at `ms`; zones change offset on quarter hours, so one reading per quarter hour. */
function offsetAt(ms: number, tz: string): number {
  const key = `${tz}|${Math.floor(ms / QUARTER)}`;
  let off = offsets.get(key);
  if (off !== undefined) return off;
  let f = formats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formats.set(tz, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(ms)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute);
  off = wall - Math.floor(ms / MINUTE) * MINUTE;
  if (offsets.size > 50_000) offsets.clear();
  offsets.set(key, off);
  return off;
}

/** `ms` on the zone's wall clock, as a UTC-based timestamp (read it with getUTC*). */
export const wall = (ms: number, tz: string) => ms + offsetAt(ms, tz);
const pad = (n: number) => (n < 10 ? `0${n}` : String(n));
export function hm(ms: number, tz: string): string {
  const d = new Date(wall(ms, tz));
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}
export function ymdHm(ms: number, tz: string): string {
  const d = new Date(wall(ms, tz));
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}
export const iso = (ms: number) => new Date(ms).toISOString();

// ---------------------------------------------------------------------------
// Rules (the service's defaults)
// ---------------------------------------------------------------------------

interface DayConfig {
  availableTime?: { start: string; end: string };
  breakTimes?: { start: string; end: string }[];
}
export interface RoomConfig {
  dayConfig?: Record<string, DayConfig>;
  minimumLeadTime?: { minutes?: number; hours?: number; days?: number };
  maxAdvanceBookingDays?: number;
  maxDurationMinutes?: number;
  meetingConfig?: { preStartMinutes?: number; postStartWarnMinutes?: number; postStartExpireMinutes?: number; preEndMinutes?: number };
}
const MEETING_DEFAULTS = { preStartMinutes: 15, postStartWarnMinutes: 10, postStartExpireMinutes: 15, preEndMinutes: 15 };
export const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const minutesOf = (hms: string) => Number(hms.slice(0, 2)) * 60 + Number(hms.slice(3, 5));

export class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A room's config parsed once per stored text. */
const configs = new Map<string, { text: string; cfg: RoomConfig }>();
export function configOf(roomId: string, text: string): RoomConfig {
  const c = configs.get(roomId);
  if (c && c.text === text) return c.cfg;
  const cfg = JSON.parse(text) as RoomConfig;
  configs.set(roomId, { text, cfg });
  return cfg;
}

/** The configuration rules of one window on the project's wall clock; the problems found. */
export function ruleProblems(cfg: RoomConfig, start: number, end: number, now: number, tz: string): string[] {
  const problems: string[] = [];
  const minutes = (end - start) / MINUTE;
  if (cfg.maxDurationMinutes && minutes > cfg.maxDurationMinutes)
    problems.push(`A booking may last at most ${cfg.maxDurationMinutes} minutes`);
  const lead = cfg.minimumLeadTime ?? {};
  const leadMs = ((lead.days ?? 0) * 1440 + (lead.hours ?? 0) * 60 + (lead.minutes ?? 0)) * MINUTE;
  if (start < now + leadMs) problems.push('This room must be booked in advance');
  if (cfg.maxAdvanceBookingDays !== undefined && start > now + cfg.maxAdvanceBookingDays * 1440 * MINUTE) {
    problems.push(`This room can be booked at most ${cfg.maxAdvanceBookingDays} days ahead`);
  }
  const s = wall(start, tz);
  const e = wall(end, tz);
  const dayStart = Math.floor(s / 86_400_000) * 86_400_000;
  const day = cfg.dayConfig?.[WEEKDAYS[(new Date(s).getUTCDay() + 6) % 7]];
  const from = (s - dayStart) / MINUTE;
  const to = (e - dayStart) / MINUTE;
  if (!day?.availableTime) problems.push('The room is closed on that day');
  else if (from < minutesOf(day.availableTime.start) || to > minutesOf(day.availableTime.end))
    problems.push('The booking is outside opening hours');
  for (const b of day?.breakTimes ?? [])
    if (from < minutesOf(b.end) && minutesOf(b.start) < to) problems.push('The booking overlaps a break');
  return problems;
}

export interface PlannedTimer {
  kind: string;
  dueAt: number;
}

/** The lifecycle steps of a new booking (5 with the default config), in due order. */
export function planTimers(cfg: RoomConfig, start: number, end: number, now: number): PlannedTimer[] {
  const mc = cfg.meetingConfig ? { ...MEETING_DEFAULTS, ...cfg.meetingConfig } : MEETING_DEFAULTS;
  const out: PlannedTimer[] = [];
  if (mc.preStartMinutes >= 0 && start - mc.preStartMinutes * MINUTE >= now)
    out.push({ kind: 'reminder', dueAt: start - mc.preStartMinutes * MINUTE });
  if (mc.postStartExpireMinutes === 0) out.push({ kind: 'auto-check-in', dueAt: start });
  else if (mc.postStartExpireMinutes > 0) {
    if (mc.postStartWarnMinutes >= 0 && mc.postStartWarnMinutes < mc.postStartExpireMinutes)
      out.push({ kind: 'no-show-warning', dueAt: start + mc.postStartWarnMinutes * MINUTE });
    out.push({ kind: 'no-show-cancel', dueAt: start + mc.postStartExpireMinutes * MINUTE });
  }
  if (mc.preEndMinutes >= 0) out.push({ kind: 'ending-soon', dueAt: Math.max(start, end - mc.preEndMinutes * MINUTE) });
  out.push({ kind: 'end', dueAt: end });
  return out.sort((a, b) => a.dueAt - b.dueAt);
}

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

export const CreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['meetingRoomId', 'startDateTime', 'endDateTime'],
  properties: {
    meetingRoomId: { type: 'string', pattern: '^[0-9a-f]{24}$' },
    title: { type: 'string', maxLength: 255 },
    body: { type: 'string', maxLength: 10_000 },
    startDateTime: { type: 'string', format: 'date-time' },
    endDateTime: { type: 'string', format: 'date-time' },
  },
} as const;

export interface CreateInput {
  meetingRoomId: string;
  title?: string;
  body?: string;
  startDateTime: string;
  endDateTime: string;
}

/** The window of a create, on whole minutes; 400 when it does not end after it starts. */
export function windowOf(input: CreateInput): { start: number; end: number } {
  const start = Math.floor(Date.parse(input.startDateTime) / MINUTE) * MINUTE;
  const end = Math.floor(Date.parse(input.endDateTime) / MINUTE) * MINUTE;
  if (!(end > start)) throw new Refusal(400, 'KS001', 'body.endDateTime must be after body.startDateTime');
  return { start, end };
}

// ---------------------------------------------------------------------------
// Bearer tokens
// ---------------------------------------------------------------------------

export interface Principal {
  appId: string;
  clientId: string;
  userId: string;
  userName: string;
  userEmail: string | null;
  projects: Map<string, string[] | null>;
  /** The whoami answer's project list, built once. */
  projectList: { projectId: string; permissions: string[] }[];
}

/** A token row as read (once) from the store: its secret's SHA-256, its validity and the principal it stands for. */
export interface TokenEntry {
  secretHash: Buffer;
  env: string;
  expiresAt: number;
  revokedAt: number | null;
  principal: Principal;
}

/** The token rows of a token id (one per project role of its app), as a cache entry. */
export interface TokenRow {
  secret_hash: string;
  env: string;
  expires_at: number | string;
  revoked_at: number | string | null;
  app_id: string;
  client_id: string;
  service_user_id: string;
  user_name: string;
  user_email: string | null;
  project_id: string | null;
  permissions: string | null;
}

export function tokenEntry(rows: TokenRow[]): TokenEntry | undefined {
  const t = rows[0];
  if (!t) return undefined;
  const projects = new Map<string, string[] | null>();
  for (const r of rows)
    if (r.project_id) projects.set(r.project_id, r.permissions === null ? null : (JSON.parse(r.permissions) as string[]));
  return {
    secretHash: Buffer.from(t.secret_hash, 'hex'),
    env: t.env,
    expiresAt: Number(t.expires_at),
    revokedAt: t.revoked_at === null ? null : Number(t.revoked_at),
    principal: {
      appId: t.app_id,
      clientId: t.client_id,
      userId: t.service_user_id,
      userName: t.user_name,
      userEmail: t.user_email,
      projects,
      projectList: [...projects].map(([projectId, perms]) => ({ projectId, permissions: [...(perms ?? [])].sort() })),
    },
  };
}

const TOKEN_RE = /^Bearer\s+kat_([0-9a-f]{24})_([A-Za-z0-9_-]{43})\s*$/i;
const unauthorized = (message = 'Invalid or expired token') => new Refusal(401, 'KS002', message);

/** The token id and secret of an `Authorization: Bearer kat_<id>_<secret>` header; 401 when it is not one. */
export function bearerOf(header: string | undefined): { id: string; secret: string } {
  const m = TOKEN_RE.exec(header ?? '');
  if (!m) throw unauthorized('Missing bearer token');
  return { id: m[1], secret: m[2] };
}

/** The SHA-256 of the secret compared in constant time with the token row's, then environment, revocation and expiry. */
export function checkToken(bearer: { secret: string }, t: TokenEntry | undefined, now: number): Principal {
  if (!t || !timingSafeEqual(t.secretHash, sha256(bearer.secret))) throw unauthorized();
  if (t.env !== ENV || t.revokedAt !== null || t.expiresAt <= now) throw unauthorized();
  return t.principal;
}

/** Checks a bearer token against the token row of its id (`lookup`: from a cache, read from the store on a miss). */
export function authenticate(header: string | undefined, lookup: (id: string) => TokenEntry | undefined, now: number): Principal {
  const bearer = bearerOf(header);
  return checkToken(bearer, lookup(bearer.id), now);
}

export function newToken(now: number): { id: string; secret: string; hash: string; bearer: string } {
  const id = newId(now);
  const secret = randomBytes(32).toString('base64url');
  return { id, secret, hash: sha256(secret).toString('hex'), bearer: `kat_${id}_${secret}` };
}

// ---------------------------------------------------------------------------
// Answers, event and delivery
// ---------------------------------------------------------------------------

export interface RoomRow {
  id: string;
  project_id: string;
  name: string;
  status: string;
  is_public: number;
  cleanup_minutes: number | null;
  config: string;
  timezone: string;
  default_cleanup_minutes: number;
  max_hold_ms: number | string;
  floor_name: string | null;
}

/** 404, 409 or 403 when this principal may not book this room. */
export function checkRoom(p: Principal, room: RoomRow | undefined): asserts room is RoomRow {
  if (!room || !p.projects.has(room.project_id)) throw new Refusal(404, 'KS005', 'Meeting room not found');
  if (room.status === 'inactive') throw new Refusal(409, 'MEETING_006', 'This room is inactive and cannot be booked');
  if (room.is_public !== 1 && p.projects.get(room.project_id) === null)
    throw new Refusal(403, 'KS003', 'This room is private to the members of its project');
}

export function clashRefusal(clash: { start_at: number | string; end_at: number | string }, cleanupMs: number, tz: string): Refusal {
  const s = Number(clash.start_at);
  const e = Number(clash.end_at);
  return new Refusal(
    409,
    'KS012',
    `The room is booked ${ymdHm(s, tz)}–${hm(e, tz)} and held for cleaning until ${hm(e + cleanupMs, tz)} (${tz})`,
  );
}

export function eventData(p: Principal, room: RoomRow, w: { start: number; end: number }, now: number) {
  return {
    projectId: room.project_id,
    userId: p.userId,
    timestamp: iso(now),
    roomName: room.name,
    floorName: room.floor_name ?? '',
    bookingDate: iso(w.start),
    startTime: hm(w.start, room.timezone),
    endTime: hm(w.end, room.timezone),
    userName: p.userName,
    ...(p.userEmail ? { userEmail: p.userEmail } : {}),
  };
}

export const organizerJson = (p: Principal) =>
  JSON.stringify({ email: p.userEmail, name: p.userName, displayName: p.userName, checkInAt: null, checkOutAt: null });

export function createdAnswer(
  p: Principal,
  room: RoomRow,
  input: CreateInput,
  w: { start: number; end: number },
  o: { id: string; pin: string; now: number },
) {
  const at = iso(o.now);
  const startIso = iso(w.start);
  const endIso = iso(w.end);
  return {
    code: 'KS000',
    success: true,
    message: 'Success',
    data: {
      _id: o.id,
      status: 'active',
      projectId: room.project_id,
      title: input.title ?? '',
      body: input.body ?? '',
      startDateTime: startIso,
      endDateTime: endIso,
      allDay: false,
      organizer: {
        userId: p.userId,
        email: p.userEmail ?? '',
        name: p.userName,
        displayName: p.userName,
        checkInDateTime: null,
        checkOutDateTime: null,
      },
      attendees: [],
      billingSummaries: [],
      histories: [
        {
          action: 'create',
          at,
          by: p.userId,
          source: 'partner',
          sourceDetail: p.clientId,
          newStartDateTime: startIso,
          newEndDateTime: endIso,
        },
      ],
      createdAt: at,
      updatedAt: at,
      meetingRoomId: room.id,
      meetingRoomName: room.name,
      pinCode: o.pin,
    },
  };
}

export const whoamiAnswer = (p: Principal) => ({
  code: 'KS000',
  success: true,
  message: 'Success',
  data: { kind: 'app', appId: p.clientId, userId: null, projects: p.projectList },
});

/** The seeded rooms' config: open 06:00-23:00 every day, no lead time, a year ahead, 8 hours at most. */
export const OPEN_ALL_WEEK: RoomConfig = {
  dayConfig: Object.fromEntries(WEEKDAYS.map((d) => [d, { availableTime: { start: '06:00:00', end: '23:00:00' } }])),
  minimumLeadTime: { minutes: 0, hours: 0, days: 0 },
  maxAdvanceBookingDays: 365,
  maxDurationMinutes: 480,
};
