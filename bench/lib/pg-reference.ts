/**
 * The PostgreSQL reference server of the bench: the same essential create as
 * bench/reference-server.ts (and the same authenticated GET), on PostgreSQL with
 * `pg` (a pool of 10, as the service), in the fewest round trips:
 *
 *   1. the room with its project and floor (its config decides the rules, checked
 *      in the process before anything is written);
 *   2. one simple-protocol call of several statements, one transaction:
 *      `begin; select … from rooms … for update;` (the room's lock: creates of one
 *      room queue here, across instances), then one statement whose data-modifying
 *      CTEs check the overlap against the room's held slots including cleaning time
 *      and, only when there is no clash, insert the meeting, its slot, its history
 *      entry, its timers (one multi-row insert), raise the project's longest hold,
 *      the ROOM_BOOK event and one delivery per enabled listener subscribed to it;
 *      `commit;`. Under READ COMMITTED each statement of the call takes a new
 *      snapshot, so the check after the lock sees every booking committed before it.
 *
 * The token rows are cached as on SQLite (one select on a miss). Values go into the
 * call as literals (pg's escapeLiteral for text; ids, times and counts are made
 * here). Run as a child by bench/lib/subjects.ts: REFERENCE_PG_URL (an empty
 * database), REFERENCE_ROOMS (200), REFERENCE_TIMEZONE.
 */
import Fastify, { type FastifyReply } from 'fastify';
import pg from 'pg';
import {
  CreateBody,
  MINUTE,
  Refusal,
  bearerOf,
  checkRoom,
  checkToken,
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
} from './reference-core.js';
import { REFERENCE_SCHEMA } from './reference-schema.js';
import { ROOM_SQL, TOKEN_SQL, seedReference } from './reference-seed.js';
import { failed, serve } from './rpc-child.js';

const URL_ = process.env.REFERENCE_PG_URL;
const ROOMS = Number(process.env.REFERENCE_ROOMS || 200);
const TZ = process.env.REFERENCE_TIMEZONE || 'Asia/Bangkok';

/** `?` placeholders as `$n`. */
const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};
const lit = (s: string | null) => (s === null ? 'null' : pg.escapeLiteral(s));
const int = (n: number) => {
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${n}`);
  return String(n);
};

/** The transaction of one create, as one multi-statement text; its third statement answers the clash, if any. */
function createSql(
  p: Principal,
  room: RoomRow,
  input: CreateInput,
  w: { start: number; end: number },
  timers: PlannedTimer[],
  now: number,
) {
  const cleanupMs = (room.cleanup_minutes ?? room.default_cleanup_minutes) * MINUTE;
  const id = newId(now);
  const pin = newPin();
  const [r, pj, s, e, t] = [lit(room.id), lit(room.project_id), int(w.start), int(w.end), int(now)];
  const hold = int(w.end - w.start);
  const lower = int(w.start - cleanupMs);
  const holdEnd = int(w.end + cleanupMs);
  const data = eventData(p, room, w, now);
  const delivery = JSON.stringify({ type: 'ROOM_BOOK', version: 1, occurredAt: iso(now), projectId: room.project_id, data });
  const eventId = lit(newId(now));
  const timerRows = timers.map(
    (x) => `(${lit(newId(now))}, ${lit(id)}, ${lit(x.kind)}, ${int(x.dueAt)}::int8, ${s}::int8, ${e}::int8, 'pending', ${t}::int8)`,
  );
  const sql = `begin;
select id from rooms where id = ${r} for update;
with clash as (
  select start_at, end_at from meeting_slots
  where asset_id = ${r} and start_at < ${holdEnd} and start_at > ${lower} - (select max_hold_ms from projects where id = ${pj})
    and end_at > ${lower} and ${s} < end_at + ${int(cleanupMs)}
  order by start_at limit 1),
m as (insert into meetings (id, project_id, asset_kind, asset_id, room_id, title, body, start_at, end_at, booked_end_at, span_end_at,
    all_day, status, pin_enc, pin_failures, organizer_user_id, organizer, attendees, app_id, billing_summaries, created_at, updated_at)
  select ${lit(id)}, ${pj}, 'room', ${r}, ${r}, ${lit(input.title ?? '')}, ${lit(input.body ?? '')}, ${s}, ${e}, ${e}, ${e},
    0, 'active', ${lit(seal(pin))}, 0, ${lit(p.userId)}, ${lit(organizerJson(p))}, '[]', ${lit(p.appId)}, '[]', ${t}, ${t}
  where not exists (select 1 from clash) returning id),
sl as (insert into meeting_slots (id, meeting_id, project_id, asset_id, occurrence_index, start_at, end_at)
  select m.id, m.id, ${pj}, ${r}, 0, ${s}, ${e} from m),
hp as (update projects set max_hold_ms = ${hold} where id = ${pj} and max_hold_ms < ${hold} and exists (select 1 from m)),
h as (insert into meeting_histories (id, meeting_id, seq, action, at, by, source, source_detail, new_start_at, new_end_at)
  select ${lit(newId(now))}, m.id, 1, 'create', ${t}, ${lit(p.userId)}, 'partner', ${lit(p.clientId)}, ${s}, ${e} from m),
ti as (insert into timers (id, meeting_id, kind, due_at, window_start, window_end, status, created_at)
  select v.* from m, (values ${timerRows.join(', ')}) v),
ev as (insert into events (id, project_id, meeting_id, type, occurred_at, data)
  select ${eventId}, ${pj}, m.id, 'ROOM_BOOK', ${t}, ${lit(JSON.stringify(data))} from m returning id),
d as (insert into deliveries (id, event_id, webhook_id, type, body, status, attempts, next_attempt_at, created_at, updated_at)
  select x.did, ev.id, wh.id, 'ROOM_BOOK', '{"id":"' || x.did || '",' || ${lit(delivery.slice(1))}, 'pending', 0, ${t}, ${t}, ${t}
  from ev, webhooks wh, lateral (select 'whk_' || gen_random_uuid() as did) x
  where wh.project_id = ${pj} and wh.enabled = 1 and wh.events::jsonb ? 'ROOM_BOOK')
select (select start_at from clash) as clash_start, (select end_at from clash) as clash_end;
commit;`;
  return { sql, id, pin, cleanupMs };
}

async function main(): Promise<void> {
  if (!URL_) throw new Error('REFERENCE_PG_URL is not set');
  const pool = new pg.Pool({ connectionString: URL_, max: 10 });
  pool.on('error', () => {});
  await pool.query(REFERENCE_SCHEMA);
  const seeded = await seedReference((sql, params) => pool.query(numbered(sql), params), { rooms: ROOMS, timezone: TZ });
  const tokenSql = numbered(TOKEN_SQL);
  const roomSql = { name: 'reference-room', text: numbered(ROOM_SQL) };
  const tokens = new Map<string, TokenEntry | undefined>();
  const principal = async (header: string | undefined, now: number) => {
    const bearer = bearerOf(header);
    if (!tokens.has(bearer.id)) tokens.set(bearer.id, tokenEntry((await pool.query<TokenRow>(tokenSql, [bearer.id])).rows));
    return checkToken(bearer, tokens.get(bearer.id), now);
  };

  const app = Fastify({ logger: false });
  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown[] }, _req, reply: FastifyReply) => {
    if (err instanceof Refusal) return reply.status(err.status).send({ code: err.code, success: false, message: err.message });
    if (err.validation) return reply.status(400).send({ code: 'KS001', success: false, message: [err.message] });
    return reply.status(err.statusCode ?? 500).send({ code: 'KS999', success: false, message: err.message });
  });

  app.get('/whoami', async (req) => whoamiAnswer(await principal(req.headers.authorization, Date.now())));

  app.post<{ Body: CreateInput }>('/meetings', { schema: { body: CreateBody } }, async (req, reply) => {
    const now = Date.now();
    const p = await principal(req.headers.authorization, now);
    const input = req.body;
    const room = (await pool.query<RoomRow>({ ...roomSql, values: [input.meetingRoomId] })).rows[0];
    checkRoom(p, room);
    const cfg = configOf(room.id, room.config);
    const w = windowOf(input);
    const problems = ruleProblems(cfg, w.start, w.end, now, room.timezone);
    if (problems.length) return reply.status(400).send({ code: 'KS001', success: false, message: problems });
    const c = createSql(p, room, input, w, planTimers(cfg, w.start, w.end, now), now);
    const client = await pool.connect();
    let results: pg.QueryResult[];
    try {
      results = (await client.query(c.sql)) as unknown as pg.QueryResult[];
    } catch (err) {
      await client.query('rollback').catch(() => undefined);
      client.release();
      throw err;
    }
    client.release();
    const clash = results[2].rows[0] as { clash_start: string | null; clash_end: string | null };
    if (clash.clash_start !== null)
      throw clashRefusal({ start_at: clash.clash_start, end_at: clash.clash_end! }, c.cleanupMs, room.timezone);
    return reply.status(201).send(createdAnswer(p, room, input, w, { id: c.id, pin: c.pin, now }));
  });

  app.get<{ Params: { id: string } }>('/meeting-rooms/:id/slot-count', async (req) => {
    await principal(req.headers.authorization, Date.now());
    const { rows } = await pool.query<{ n: string }>('select count(*) as n from meeting_slots where asset_id = $1', [req.params.id]);
    return { code: 'KS000', success: true, message: 'Success', data: { count: Number(rows[0].n) } };
  });

  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  serve({}, async () => {
    await app.close();
    await pool.end();
  }).ready({ url, pid: process.pid, ...seeded });
}

main().catch(failed);
