/**
 * The reference servers' site, written the same way on both engines: one project
 * (its timezone, 10 minutes of cleaning by default), 10 floors, `rooms` rooms and
 * one contended room (open all week, 15 minutes of cleaning), the app's service
 * user, the app with its project role, one webhook listener subscribed to
 * ROOM_BOOK, and a bearer token valid for a day.
 */
import { ENV, OPEN_ALL_WEEK, newId, newToken } from './reference-core.js';

export interface ReferenceSite {
  projectId: string;
  roomIds: string[];
  contendedRoomId: string;
  token: string;
}

/** `run(sql, params)` runs one insert (`?` placeholders). */
export async function seedReference(
  run: (sql: string, params: unknown[]) => unknown,
  o: { rooms: number; timezone: string },
): Promise<ReferenceSite> {
  const now = Date.now();
  const projectId = newId(now);
  await run('insert into projects (id, name, timezone, default_cleanup_minutes) values (?, ?, ?, ?)', [
    projectId,
    'Reference Tower',
    o.timezone,
    10,
  ]);
  const floors: string[] = [];
  for (let i = 0; i < 10; i++) {
    floors.push(newId(now));
    await run('insert into floors (id, project_id, name) values (?, ?, ?)', [floors[i], projectId, `${i + 1}F`]);
  }
  const config = JSON.stringify(OPEN_ALL_WEEK);
  const room = (id: string, floor: string, name: string) =>
    run('insert into rooms (id, project_id, floor_id, name, status, is_public, cleanup_minutes, config) values (?, ?, ?, ?, ?, ?, ?, ?)', [
      id,
      projectId,
      floor,
      name,
      'active',
      1,
      15,
      config,
    ]);
  const roomIds: string[] = [];
  for (let i = 0; i < o.rooms; i++) {
    roomIds.push(newId(now));
    await room(roomIds[i], floors[i % floors.length], `Room ${i}`);
  }
  const contendedRoomId = newId(now);
  await room(contendedRoomId, floors[0], 'Contended');
  const userId = newId(now);
  await run('insert into users (id, email, name, profile_name) values (?, ?, ?, ?)', [userId, null, 'Bench', null]);
  const appId = newId(now);
  await run('insert into apps (id, env, client_id, service_user_id) values (?, ?, ?, ?)', [appId, ENV, 'bench-app', userId]);
  await run('insert into app_projects (app_id, project_id, permissions) values (?, ?, ?)', [
    appId,
    projectId,
    JSON.stringify(['MEETING_UPDATE']),
  ]);
  await run('insert into webhooks (id, project_id, url, events, enabled) values (?, ?, ?, ?, 1)', [
    newId(now),
    projectId,
    'http://127.0.0.1:9/hook',
    JSON.stringify(['ROOM_BOOK']),
  ]);
  const t = newToken(now);
  await run('insert into tokens (id, app_id, secret_hash, env, created_at, expires_at) values (?, ?, ?, ?, ?, ?)', [
    t.id,
    appId,
    t.hash,
    ENV,
    now,
    now + 86_400_000,
  ]);
  return { projectId, roomIds, contendedRoomId, token: t.bearer };
}

/** The token rows of a token id, with its app, the app's service user and the app's project roles. */
export const TOKEN_SQL = `
  select t.secret_hash, t.env, t.expires_at, t.revoked_at, a.id as app_id, a.client_id, a.service_user_id,
         u.name as user_name, u.email as user_email, ap.project_id, ap.permissions
  from tokens t join apps a on a.id = t.app_id left join users u on u.id = a.service_user_id
  left join app_projects ap on ap.app_id = a.id
  where t.id = ?`;

/** A room with its project and floor. */
export const ROOM_SQL = `
  select r.id, r.project_id, r.name, r.status, r.is_public, r.cleanup_minutes, r.config,
         p.timezone, p.default_cleanup_minutes, p.max_hold_ms, f.name as floor_name
  from rooms r join projects p on p.id = r.project_id left join floors f on f.id = r.floor_id
  where r.id = ?`;
