/**
 * The reference server of the bench: a minimal Fastify + better-sqlite3 server
 * doing the essential work of the service's `POST /meetings` (and of an
 * authenticated GET), written as directly as one would by hand. The service's
 * create is measured against it (bench:booking, target ≥ 0.7×), and its
 * authenticated GET against `GET /whoami` here (bench:auth).
 *
 * What it does per create, like the service and with nothing the service could
 * not do too:
 * - bearer token: one indexed select of the token row by id (joined with its app,
 *   the app's service user and the app's project roles) and a constant-time
 *   compare of the SHA-256 of the secret; environment, expiry and revocation;
 * - JSON body validated by a schema (Fastify/ajv), the same body shape;
 * - the room with its project and floor (one read), the project in the token's
 *   scope, the room active and public (or the app holds a role), its config
 *   parsed from JSON; the rules: end after start, minute precision, duration,
 *   lead time, advance limit, opening hours and breaks on the project's wall
 *   clock (luxon, as the service);
 * - in one `BEGIN IMMEDIATE` transaction: the overlap check against the room's
 *   held slots including the cleaning time (bounded by the project's longest
 *   hold, kept up to date), then insert the booking (PIN sealed with AES-GCM),
 *   its slot, its first history entry, its lifecycle timers (planned by the same
 *   rules: reminder, no-show warning and cancel, ending soon, end — 5 with the
 *   default config), the ROOM_BOOK event and one delivery per enabled listener
 *   subscribed to it (one, in the bench), with the same payload shapes;
 * - 201 with the booking in the service's envelope, of about the same size;
 *   409 KS012 naming the clash.
 * WAL, synchronous=NORMAL, foreign keys on, every statement prepared once.
 *
 * Its tiny schema has the service's columns and secondary indexes for the tables
 * it writes. Run by the bench scripts as a child process (bench/lib/subjects.ts):
 * REFERENCE_DB (file, created), REFERENCE_ROOMS (200), REFERENCE_TIMEZONE.
 */
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import Database from 'better-sqlite3';
import { DateTime } from 'luxon';
import { createCipheriv, createHash, randomBytes, randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import { failed, serve } from './lib/rpc-child.js';

const DB_FILE = process.env.REFERENCE_DB;
const ROOMS = Number(process.env.REFERENCE_ROOMS || 200);
const TZ = process.env.REFERENCE_TIMEZONE || 'Asia/Bangkok';
const ENV = 'development';
const MINUTE = 60_000;

// ---------------------------------------------------------------------------
// Ids (the service's layout: seconds, 5 random bytes, counter) and sealed PINs
// ---------------------------------------------------------------------------

const processRandom = randomBytes(5);
let counter = randomInt(0xffffff);
function newId(now = Date.now()): string {
  const buf = Buffer.alloc(12);
  buf.writeUInt32BE(Math.floor(now / 1000) >>> 0, 0);
  processRandom.copy(buf, 4);
  counter = (counter + 1) & 0xffffff;
  buf.writeUIntBE(counter, 9, 3);
  return buf.toString('hex');
}

const sealKey = randomBytes(32);
function seal(plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex');

// ---------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------

const SCHEMA = `
create table projects (id text primary key, name text not null, timezone text not null, default_cleanup_minutes integer not null,
  max_hold_ms integer not null default 0);
create table floors (id text primary key, project_id text not null references projects(id), name text not null);
create table rooms (id text primary key, project_id text not null references projects(id), floor_id text references floors(id),
  name text not null, status text not null, is_public integer not null, cleanup_minutes integer, config text not null);
create table users (id text primary key, email text, name text not null, profile_name text);
create table apps (id text primary key, env text not null, client_id text not null, service_user_id text references users(id));
create table app_projects (app_id text not null references apps(id), project_id text not null references projects(id),
  permissions text, primary key (app_id, project_id));
create table tokens (id text primary key, app_id text not null references apps(id), secret_hash text not null, env text not null,
  created_at integer not null, expires_at integer not null, revoked_at integer);
create index tokens_expiry_idx on tokens (expires_at);
create table webhooks (id text primary key, project_id text not null references projects(id), url text not null, events text not null,
  enabled integer not null);
create table bookings (id text primary key, project_id text not null references projects(id), asset_kind text not null,
  asset_id text not null, room_id text references rooms(id), title text not null, body text not null,
  start_at integer not null, end_at integer not null, booked_end_at integer not null, span_end_at integer not null,
  all_day integer not null, status text not null, pin_enc text not null, pin_failures integer not null default 0,
  organizer_user_id text not null references users(id), organizer text not null, attendees text not null, app_id text,
  billing_summaries text not null, created_at integer not null, updated_at integer not null);
create index bookings_project_start_idx on bookings (project_id, start_at);
create index bookings_organizer_idx on bookings (organizer_user_id, start_at);
create table slots (id text primary key, booking_id text not null references bookings(id), project_id text not null,
  asset_id text not null, occurrence_index integer not null, start_at integer not null, end_at integer not null);
create index slots_asset_idx on slots (asset_id, start_at);
create index slots_project_idx on slots (project_id, start_at);
create index slots_booking_idx on slots (booking_id);
create table histories (id text primary key, booking_id text not null references bookings(id), seq integer not null,
  action text not null, at integer not null, by text not null, source text not null, source_detail text, reason text,
  status_before text, old_start_at integer, old_end_at integer, new_start_at integer, new_end_at integer, unique (booking_id, seq));
create table timers (id text primary key, booking_id text not null references bookings(id), kind text not null, due_at integer not null,
  window_start integer not null, window_end integer not null, status text not null, created_at integer not null, fired_at integer);
create index timers_due_idx on timers (status, due_at);
create index timers_booking_idx on timers (booking_id);
create table events (id text primary key, project_id text not null, booking_id text, type text not null, occurred_at integer not null,
  data text not null);
create index events_project_idx on events (project_id, occurred_at);
create table deliveries (id text primary key, event_id text not null references events(id), webhook_id text not null references webhooks(id),
  type text not null, body text not null, status text not null, attempts integer not null, next_attempt_at integer,
  claimed_until integer, last_status integer, last_error text, created_at integer not null, updated_at integer not null, delivered_at integer);
create index deliveries_due_idx on deliveries (status, next_attempt_at);
create index deliveries_webhook_idx on deliveries (webhook_id, created_at);
`;

// ---------------------------------------------------------------------------
// Rules (the service's defaults)
// ---------------------------------------------------------------------------

interface DayConfig {
  availableTime?: { start: string; end: string };
  breakTimes?: { start: string; end: string }[];
}
interface RoomConfig {
  dayConfig?: Record<string, DayConfig>;
  minimumLeadTime?: { minutes?: number; hours?: number; days?: number };
  maxAdvanceBookingDays?: number;
  maxDurationMinutes?: number;
  meetingConfig?: { preStartMinutes?: number; postStartWarnMinutes?: number; postStartExpireMinutes?: number; preEndMinutes?: number };
}
const MEETING_DEFAULTS = { preStartMinutes: 15, postStartWarnMinutes: 10, postStartExpireMinutes: 15, preEndMinutes: 15 };
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const minutesOf = (hms: string) => {
  const [h, m] = hms.split(':');
  return Number(h) * 60 + Number(m);
};

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The configuration rules of one window on the project's wall clock; the problems found. */
function ruleProblems(cfg: RoomConfig, start: number, end: number, now: number, tz: string): string[] {
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
  const s = DateTime.fromMillis(start, { zone: tz });
  const e = DateTime.fromMillis(end, { zone: tz });
  const day = cfg.dayConfig?.[WEEKDAYS[s.weekday - 1]];
  const from = s.hour * 60 + s.minute;
  const to = e.hasSame(s, 'day') ? e.hour * 60 + e.minute : e.diff(s.startOf('day'), 'minutes').minutes;
  if (!day?.availableTime) problems.push('The room is closed on that day');
  else if (from < minutesOf(day.availableTime.start) || to > minutesOf(day.availableTime.end))
    problems.push('The booking is outside opening hours');
  for (const b of day?.breakTimes ?? [])
    if (from < minutesOf(b.end) && minutesOf(b.start) < to) problems.push('The booking overlaps a break');
  return problems;
}

function planTimers(cfg: RoomConfig, start: number, end: number, now: number): { kind: string; dueAt: number }[] {
  const mc = { ...MEETING_DEFAULTS, ...(cfg.meetingConfig ?? {}) };
  const out: { kind: string; dueAt: number }[] = [];
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

const iso = (ms: number) => new Date(ms).toISOString();
const hm = (ms: number, tz: string) => DateTime.fromMillis(ms, { zone: tz }).toFormat('HH:mm');

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

interface Principal {
  appId: string;
  clientId: string;
  userId: string;
  userName: string;
  userEmail: string | null;
  projects: Map<string, string[] | null>;
}

interface RoomRow {
  id: string;
  project_id: string;
  name: string;
  status: string;
  is_public: number;
  cleanup_minutes: number | null;
  config: string;
  timezone: string;
  default_cleanup_minutes: number;
  max_hold_ms: number;
  floor_name: string | null;
}

const CreateBody = {
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

interface CreateInput {
  meetingRoomId: string;
  title?: string;
  body?: string;
  startDateTime: string;
  endDateTime: string;
}

function seed(db: Database.Database) {
  const now = Date.now();
  const projectId = newId(now);
  db.prepare('insert into projects (id, name, timezone, default_cleanup_minutes) values (?, ?, ?, ?)').run(
    projectId,
    'Reference Tower',
    TZ,
    10,
  );
  const floors = Array.from({ length: 10 }, (_, i) => {
    const id = newId(now);
    db.prepare('insert into floors (id, project_id, name) values (?, ?, ?)').run(id, projectId, `${i + 1}F`);
    return id;
  });
  const config: RoomConfig = {
    dayConfig: Object.fromEntries(WEEKDAYS.map((d) => [d, { availableTime: { start: '06:00:00', end: '23:00:00' } }])),
    minimumLeadTime: { minutes: 0, hours: 0, days: 0 },
    maxAdvanceBookingDays: 365,
    maxDurationMinutes: 480,
  };
  const insertRoom = db.prepare(
    'insert into rooms (id, project_id, floor_id, name, status, is_public, cleanup_minutes, config) values (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const roomIds = Array.from({ length: ROOMS }, (_, i) => {
    const id = newId(now);
    insertRoom.run(id, projectId, floors[i % floors.length], `Room ${i}`, 'active', 1, 15, JSON.stringify(config));
    return id;
  });
  const contendedRoomId = newId(now);
  insertRoom.run(contendedRoomId, projectId, floors[0], 'Contended', 'active', 1, 15, JSON.stringify(config));
  const userId = newId(now);
  db.prepare('insert into users (id, email, name, profile_name) values (?, ?, ?, ?)').run(userId, null, 'Bench', null);
  const appId = newId(now);
  db.prepare('insert into apps (id, env, client_id, service_user_id) values (?, ?, ?, ?)').run(appId, ENV, 'bench-app', userId);
  db.prepare('insert into app_projects (app_id, project_id, permissions) values (?, ?, ?)').run(
    appId,
    projectId,
    JSON.stringify(['MEETING_UPDATE']),
  );
  db.prepare('insert into webhooks (id, project_id, url, events, enabled) values (?, ?, ?, ?, 1)').run(
    newId(now),
    projectId,
    'http://127.0.0.1:9/hook',
    JSON.stringify(['ROOM_BOOK']),
  );
  const tokenId = newId(now);
  const secret = randomBytes(32).toString('base64url');
  db.prepare('insert into tokens (id, app_id, secret_hash, env, created_at, expires_at) values (?, ?, ?, ?, ?, ?)').run(
    tokenId,
    appId,
    sha256Hex(secret),
    ENV,
    now,
    now + 86_400_000,
  );
  return { projectId, roomIds, contendedRoomId, token: `kat_${tokenId}_${secret}` };
}

async function main(): Promise<void> {
  if (!DB_FILE) throw new Error('REFERENCE_DB is not set');
  const db = new Database(DB_FILE);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.pragma('synchronous = NORMAL');
  db.exec(SCHEMA);
  const seeded = db.transaction(seed).immediate(db);

  const q = {
    token: db.prepare<
      [string],
      {
        secret_hash: string;
        env: string;
        expires_at: number;
        revoked_at: number | null;
        app_id: string;
        client_id: string;
        service_user_id: string;
        user_name: string;
        user_email: string | null;
        project_id: string | null;
        permissions: string | null;
      }
    >(`
      select t.secret_hash, t.env, t.expires_at, t.revoked_at, a.id as app_id, a.client_id, a.service_user_id,
             u.name as user_name, u.email as user_email, ap.project_id, ap.permissions
      from tokens t join apps a on a.id = t.app_id left join users u on u.id = a.service_user_id
      left join app_projects ap on ap.app_id = a.id
      where t.id = ?`),
    room: db.prepare<[string], RoomRow>(`
      select r.id, r.project_id, r.name, r.status, r.is_public, r.cleanup_minutes, r.config,
             p.timezone, p.default_cleanup_minutes, p.max_hold_ms, f.name as floor_name
      from rooms r join projects p on p.id = r.project_id left join floors f on f.id = r.floor_id
      where r.id = ?`),
    holds: db.prepare<[string, number, number, string, number], { booking_id: string; start_at: number; end_at: number }>(`
      select booking_id, start_at, end_at from slots
      where asset_id = ? and start_at < ? and start_at > ? - (select max_hold_ms from projects where id = ?) and end_at > ?
      order by start_at`),
    insertBooking:
      db.prepare(`insert into bookings (id, project_id, asset_kind, asset_id, room_id, title, body, start_at, end_at, booked_end_at,
      span_end_at, all_day, status, pin_enc, pin_failures, organizer_user_id, organizer, attendees, app_id, billing_summaries, created_at, updated_at)
      values (?, ?, 'room', ?, ?, ?, ?, ?, ?, ?, ?, 0, 'active', ?, 0, ?, ?, '[]', ?, '[]', ?, ?)`),
    insertSlot: db.prepare(
      'insert into slots (id, booking_id, project_id, asset_id, occurrence_index, start_at, end_at) values (?, ?, ?, ?, 0, ?, ?)',
    ),
    raiseHold: db.prepare('update projects set max_hold_ms = ? where id = ? and max_hold_ms < ?'),
    insertHistory:
      db.prepare(`insert into histories (id, booking_id, seq, action, at, by, source, source_detail, status_before, new_start_at, new_end_at)
      values (?, ?, 1, 'create', ?, ?, 'partner', ?, null, ?, ?)`),
    insertTimer: db.prepare(`insert into timers (id, booking_id, kind, due_at, window_start, window_end, status, created_at)
      values (?, ?, ?, ?, ?, ?, 'pending', ?)`),
    insertEvent: db.prepare('insert into events (id, project_id, booking_id, type, occurred_at, data) values (?, ?, ?, ?, ?, ?)'),
    listeners: db.prepare<[string], { id: string; events: string }>('select id, events from webhooks where project_id = ? and enabled = 1'),
    insertDelivery:
      db.prepare(`insert into deliveries (id, event_id, webhook_id, type, body, status, attempts, next_attempt_at, created_at, updated_at)
      values (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`),
    slotCount: db.prepare<[string], { n: number }>('select count(*) as n from slots where asset_id = ?'),
  };

  const unauthorized = (message = 'Invalid or expired token') => new Refusal(401, 'KS002', message);
  const TOKEN_RE = /^Bearer\s+kat_([0-9a-f]{24})_([A-Za-z0-9_-]{43})\s*$/i;
  function authenticate(req: FastifyRequest): Principal {
    const m = TOKEN_RE.exec(req.headers.authorization ?? '');
    if (!m) throw unauthorized('Missing bearer token');
    const rows = q.token.all(m[1]);
    const t = rows[0];
    if (!t || !timingSafeEqual(Buffer.from(t.secret_hash), Buffer.from(sha256Hex(m[2])))) throw unauthorized();
    if (t.env !== ENV || t.revoked_at !== null || t.expires_at <= Date.now()) throw unauthorized();
    const projects = new Map<string, string[] | null>();
    for (const r of rows)
      if (r.project_id) projects.set(r.project_id, r.permissions === null ? null : (JSON.parse(r.permissions) as string[]));
    return { appId: t.app_id, clientId: t.client_id, userId: t.service_user_id, userName: t.user_name, userEmail: t.user_email, projects };
  }

  const create = db.transaction(
    (p: Principal, room: RoomRow, input: CreateInput, w: { start: number; end: number }, cfg: RoomConfig, now: number) => {
      // The overlap check, including the cleaning time after every booking.
      const cleanupMs = (room.cleanup_minutes ?? room.default_cleanup_minutes) * MINUTE;
      const holds = q.holds.all(room.id, w.end + cleanupMs, w.start - cleanupMs, room.project_id, w.start - cleanupMs);
      const holdEnd = w.end + cleanupMs;
      const clash = holds.find((b) => b.start_at < holdEnd && w.start < b.end_at + cleanupMs);
      if (clash) {
        throw new Refusal(
          409,
          'KS012',
          `The room is booked ${DateTime.fromMillis(clash.start_at, { zone: room.timezone }).toFormat('yyyy-MM-dd HH:mm')}–` +
            `${hm(clash.end_at, room.timezone)} and held for cleaning until ${hm(clash.end_at + cleanupMs, room.timezone)} (${room.timezone})`,
        );
      }
      const id = newId(now);
      const pin = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const organizer = { email: p.userEmail, name: p.userName, displayName: p.userName, checkInAt: null, checkOutAt: null };
      q.insertBooking.run(
        id,
        room.project_id,
        room.id,
        room.id,
        input.title ?? '',
        input.body ?? '',
        w.start,
        w.end,
        w.end,
        w.end,
        seal(pin),
        p.userId,
        JSON.stringify(organizer),
        p.appId,
        now,
        now,
      );
      q.insertSlot.run(id, id, room.project_id, room.id, w.start, w.end);
      if (w.end - w.start > room.max_hold_ms) q.raiseHold.run(w.end - w.start, room.project_id, w.end - w.start);
      const historyId = newId(now);
      q.insertHistory.run(historyId, id, now, p.userId, p.clientId, w.start, w.end);
      for (const t of planTimers(cfg, w.start, w.end, now)) q.insertTimer.run(newId(now), id, t.kind, t.dueAt, w.start, w.end, now);
      const data = {
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
      const eventId = newId(now);
      q.insertEvent.run(eventId, room.project_id, id, 'ROOM_BOOK', now, JSON.stringify(data));
      for (const l of q.listeners.all(room.project_id)) {
        if (!(JSON.parse(l.events) as string[]).includes('ROOM_BOOK')) continue;
        const deliveryId = `whk_${randomUUID()}`;
        const body = JSON.stringify({
          id: deliveryId,
          type: 'ROOM_BOOK',
          version: 1,
          occurredAt: iso(now),
          projectId: room.project_id,
          data,
        });
        q.insertDelivery.run(deliveryId, eventId, l.id, 'ROOM_BOOK', body, now, now, now);
      }
      return {
        _id: id,
        status: 'active',
        projectId: room.project_id,
        title: input.title ?? '',
        body: input.body ?? '',
        startDateTime: iso(w.start),
        endDateTime: iso(w.end),
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
            at: iso(now),
            by: p.userId,
            source: 'partner',
            sourceDetail: p.clientId,
            newStartDateTime: iso(w.start),
            newEndDateTime: iso(w.end),
          },
        ],
        createdAt: iso(now),
        updatedAt: iso(now),
        meetingRoomId: room.id,
        meetingRoomName: room.name,
        pinCode: pin,
      };
    },
  );

  const app = Fastify({ logger: false });
  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown[] }, _req, reply: FastifyReply) => {
    if (err instanceof Refusal) return reply.status(err.status).send({ code: err.code, success: false, message: err.message });
    if (err.validation) return reply.status(400).send({ code: 'KS001', success: false, message: [err.message] });
    return reply.status(err.statusCode ?? 500).send({ code: 'KS999', success: false, message: err.message });
  });

  app.get('/whoami', async (req) => {
    const p = authenticate(req);
    return {
      code: 'KS000',
      success: true,
      message: 'Success',
      data: {
        kind: 'app',
        appId: p.clientId,
        userId: null,
        projects: [...p.projects].map(([projectId, perms]) => ({ projectId, permissions: [...(perms ?? [])].sort() })),
      },
    };
  });

  app.post<{ Body: CreateInput }>('/meetings', { schema: { body: CreateBody } }, async (req, reply) => {
    const p = authenticate(req);
    const input = req.body;
    const room = q.room.get(input.meetingRoomId);
    if (!room || !p.projects.has(room.project_id)) throw new Refusal(404, 'KS005', 'Meeting room not found');
    if (room.status === 'inactive') throw new Refusal(409, 'MEETING_006', 'This room is inactive and cannot be booked');
    if (room.is_public !== 1 && p.projects.get(room.project_id) === null)
      throw new Refusal(403, 'KS003', 'This room is private to the members of its project');
    const cfg = JSON.parse(room.config) as RoomConfig;
    const w = {
      start: Math.floor(Date.parse(input.startDateTime) / MINUTE) * MINUTE,
      end: Math.floor(Date.parse(input.endDateTime) / MINUTE) * MINUTE,
    };
    if (!(w.end > w.start)) throw new Refusal(400, 'KS001', 'body.endDateTime must be after body.startDateTime');
    const now = Date.now();
    const problems = ruleProblems(cfg, w.start, w.end, now, room.timezone);
    if (problems.length) return reply.status(400).send({ code: 'KS001', success: false, message: problems });
    const data = create.immediate(p, room, input, w, cfg, now);
    return reply.status(201).send({ code: 'KS000', success: true, message: 'Success', data });
  });

  app.get<{ Params: { id: string } }>('/meeting-rooms/:id/slot-count', async (req) => {
    authenticate(req);
    return { code: 'KS000', success: true, message: 'Success', data: { count: q.slotCount.get(req.params.id)!.n } };
  });

  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  serve({}, async () => {
    await app.close();
    db.close();
  }).ready({ url, pid: process.pid, dbFile: DB_FILE, ...seeded });
}

main().catch(failed);
