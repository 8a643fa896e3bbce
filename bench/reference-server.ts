/**
 * The SQLite reference server of the bench: Fastify (no plugins, logger off) and
 * better-sqlite3 doing the essential work of the service's `POST /meetings` and
 * of an authenticated `GET /auth/whoami`, as leanly as that work allows. The
 * service's create is measured against it (bench:booking), and its authenticated
 * GET against `GET /whoami` here (bench:auth). bench/lib/pg-reference.ts is the
 * same create on PostgreSQL.
 *
 * Per create, like the service and with nothing the service could not do too
 * (bench/lib/reference-core.ts):
 * - bearer token: the token row by id (with its app, the app's service user and
 *   project roles) from a cache filled by one prepared select on a miss; the
 *   SHA-256 of the secret compared in constant time; environment, revocation, expiry;
 * - the JSON body validated by its schema (Fastify's compiled ajv validator);
 * - the room with its project and floor (one prepared select), in the token's
 *   scope, active and public; its config parsed once per stored text; the rules:
 *   end after start, minutes, duration, lead time, advance limit, opening hours
 *   and breaks on the project's wall clock;
 * - one `BEGIN IMMEDIATE` transaction: the overlap check against the room's held
 *   slots including the cleaning time (bounded by the project's longest hold),
 *   then the meeting row (PIN sealed with AES-GCM), its slot, the project's
 *   longest hold raised when this one is longer, its first history entry, its
 *   lifecycle timers in one multi-row insert (5 with the default config), the
 *   ROOM_BOOK event, the listeners read and one delivery per subscribed listener;
 * - 201 with the booking in the service's envelope; 409 KS012 naming the clash.
 * WAL, synchronous=NORMAL, foreign keys on, every statement prepared once; the
 * schema is the service's for these tables (bench/lib/reference-schema.ts).
 *
 * Run by the bench scripts as a child process (bench/lib/subjects.ts):
 * REFERENCE_DB (file, created), REFERENCE_ROOMS (200), REFERENCE_TIMEZONE.
 */
import Fastify, { type FastifyReply } from 'fastify';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import {
  CreateBody,
  MINUTE,
  Refusal,
  authenticate,
  checkRoom,
  clashRefusal,
  configOf,
  createdAnswer,
  eventData,
  iso,
  newId,
  newPin,
  organizerJson,
  planTimers,
  ruleProblems,
  seal,
  tokenEntry,
  whoamiAnswer,
  windowOf,
  type CreateInput,
  type PlannedTimer,
  type Principal,
  type RoomRow,
  type TokenEntry,
  type TokenRow,
} from './lib/reference-core.js';
import { REFERENCE_SCHEMA } from './lib/reference-schema.js';
import { ROOM_SQL, TOKEN_SQL, seedReference } from './lib/reference-seed.js';
import { failed, serve } from './lib/rpc-child.js';

const DB_FILE = process.env.REFERENCE_DB;
const ROOMS = Number(process.env.REFERENCE_ROOMS || 200);
const TZ = process.env.REFERENCE_TIMEZONE || 'Asia/Bangkok';

function openDatabase(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.pragma('synchronous = NORMAL');
  db.exec(REFERENCE_SCHEMA);
  return db;
}

function statements(db: Database.Database) {
  const timerRow = '(?, ?, ?, ?, ?, ?, ?, ?)';
  const timers = new Map<number, Database.Statement>();
  return {
    token: db.prepare<[string], TokenRow>(TOKEN_SQL),
    room: db.prepare<[string], RoomRow>(ROOM_SQL),
    holds: db.prepare<[string, number, number, string, number], { meeting_id: string; start_at: number; end_at: number }>(`
      select meeting_id, start_at, end_at from meeting_slots
      where asset_id = ? and start_at < ? and start_at > ? - (select max_hold_ms from projects where id = ?) and end_at > ?
      order by start_at`),
    insertMeeting: db.prepare(`insert into meetings (id, project_id, asset_kind, asset_id, room_id, title, body, start_at, end_at,
      booked_end_at, span_end_at, all_day, status, pin_enc, pin_failures, organizer_user_id, organizer, attendees, app_id,
      billing_summaries, created_at, updated_at)
      values (?, ?, 'room', ?, ?, ?, ?, ?, ?, ?, ?, 0, 'active', ?, 0, ?, ?, '[]', ?, '[]', ?, ?)`),
    insertSlot: db.prepare(
      'insert into meeting_slots (id, meeting_id, project_id, asset_id, occurrence_index, start_at, end_at) values (?, ?, ?, ?, 0, ?, ?)',
    ),
    raiseHold: db.prepare('update projects set max_hold_ms = ? where id = ? and max_hold_ms < ?'),
    insertHistory: db.prepare(`insert into meeting_histories (id, meeting_id, seq, action, at, by, source, source_detail,
      new_start_at, new_end_at) values (?, ?, 1, 'create', ?, ?, 'partner', ?, ?, ?)`),
    /** One multi-row insert per number of timers, prepared once. */
    insertTimers(n: number): Database.Statement {
      let s = timers.get(n);
      if (!s) {
        s = db.prepare(`insert into timers (id, meeting_id, kind, due_at, window_start, window_end, status, created_at)
          values ${Array.from({ length: n }, () => timerRow).join(', ')}`);
        timers.set(n, s);
      }
      return s;
    },
    insertEvent: db.prepare('insert into events (id, project_id, meeting_id, type, occurred_at, data) values (?, ?, ?, ?, ?, ?)'),
    listeners: db.prepare<[string], { id: string; events: string }>('select id, events from webhooks where project_id = ? and enabled = 1'),
    insertDelivery: db.prepare(`insert into deliveries (id, event_id, webhook_id, type, body, status, attempts, next_attempt_at,
      created_at, updated_at) values (?, ?, ?, 'ROOM_BOOK', ?, 'pending', 0, ?, ?, ?)`),
    slotCount: db.prepare<[string], { n: number }>('select count(*) as n from meeting_slots where asset_id = ?'),
  };
}
type Statements = ReturnType<typeof statements>;

const subscribed = new Map<string, boolean>();
const subscribes = (events: string) => {
  let s = subscribed.get(events);
  if (s === undefined) subscribed.set(events, (s = (JSON.parse(events) as string[]).includes('ROOM_BOOK')));
  return s;
};

/** The create's writes, in the caller's `BEGIN IMMEDIATE` transaction; the answer. */
function writeCreate(
  q: Statements,
  p: Principal,
  room: RoomRow,
  input: CreateInput,
  w: { start: number; end: number },
  timers: PlannedTimer[],
  now: number,
) {
  const cleanupMs = (room.cleanup_minutes ?? room.default_cleanup_minutes) * MINUTE;
  const holdEnd = w.end + cleanupMs;
  for (const b of q.holds.all(room.id, holdEnd, w.start - cleanupMs, room.project_id, w.start - cleanupMs))
    if (b.start_at < holdEnd && w.start < b.end_at + cleanupMs) throw clashRefusal(b, cleanupMs, room.timezone);
  const id = newId(now);
  const pin = newPin();
  q.insertMeeting.run(
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
    organizerJson(p),
    p.appId,
    now,
    now,
  );
  q.insertSlot.run(id, id, room.project_id, room.id, w.start, w.end);
  const hold = w.end - w.start;
  if (hold > Number(room.max_hold_ms)) q.raiseHold.run(hold, room.project_id, hold);
  q.insertHistory.run(newId(now), id, now, p.userId, p.clientId, w.start, w.end);
  const values: unknown[] = [];
  for (const t of timers) values.push(newId(now), id, t.kind, t.dueAt, w.start, w.end, 'pending', now);
  q.insertTimers(timers.length).run(values);
  const data = eventData(p, room, w, now);
  const eventId = newId(now);
  q.insertEvent.run(eventId, room.project_id, id, 'ROOM_BOOK', now, JSON.stringify(data));
  for (const l of q.listeners.all(room.project_id)) {
    if (!subscribes(l.events)) continue;
    const deliveryId = `whk_${randomUUID()}`;
    const body = JSON.stringify({ id: deliveryId, type: 'ROOM_BOOK', version: 1, occurredAt: iso(now), projectId: room.project_id, data });
    q.insertDelivery.run(deliveryId, eventId, l.id, body, now, now, now);
  }
  return createdAnswer(p, room, input, w, { id, pin, now });
}

async function main(): Promise<void> {
  if (!DB_FILE) throw new Error('REFERENCE_DB is not set');
  const db = openDatabase(DB_FILE);
  db.exec('begin immediate');
  const seeded = await seedReference((sql, params) => db.prepare(sql).run(params), { rooms: ROOMS, timezone: TZ });
  db.exec('commit');
  const q = statements(db);
  const tokens = new Map<string, TokenEntry | undefined>();
  const lookup = (id: string) => {
    if (!tokens.has(id)) tokens.set(id, tokenEntry(q.token.all(id)));
    return tokens.get(id);
  };
  const create = db.transaction(writeCreate);

  const app = Fastify({ logger: false });
  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown[] }, _req, reply: FastifyReply) => {
    if (err instanceof Refusal) return reply.status(err.status).send({ code: err.code, success: false, message: err.message });
    if (err.validation) return reply.status(400).send({ code: 'KS001', success: false, message: [err.message] });
    return reply.status(err.statusCode ?? 500).send({ code: 'KS999', success: false, message: err.message });
  });

  app.get('/whoami', async (req) => whoamiAnswer(authenticate(req.headers.authorization, lookup, Date.now())));

  app.post<{ Body: CreateInput }>('/meetings', { schema: { body: CreateBody } }, async (req, reply) => {
    const now = Date.now();
    const p = authenticate(req.headers.authorization, lookup, now);
    const input = req.body;
    const room = q.room.get(input.meetingRoomId);
    checkRoom(p, room);
    const cfg = configOf(room.id, room.config);
    const w = windowOf(input);
    const problems = ruleProblems(cfg, w.start, w.end, now, room.timezone);
    if (problems.length) return reply.status(400).send({ code: 'KS001', success: false, message: problems });
    return reply.status(201).send(create.immediate(q, p, room, input, w, planTimers(cfg, w.start, w.end, now), now));
  });

  app.get<{ Params: { id: string } }>('/meeting-rooms/:id/slot-count', async (req) => {
    authenticate(req.headers.authorization, lookup, Date.now());
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
