/**
 * The reference servers' schema: the service's tables, columns and secondary
 * indexes for what a create reads and writes (meetings, meeting_slots,
 * meeting_histories, timers, events, deliveries), and the few tables it reads
 * (projects, floors, rooms, users, apps, app_projects, tokens, webhooks).
 * `int8` is the service's `bigint`: an INTEGER column on SQLite, bigint on PostgreSQL.
 */
export const REFERENCE_SCHEMA = `
create table projects (id text primary key, name text not null, timezone text not null, default_cleanup_minutes integer not null,
  max_hold_ms int8 not null default 0);
create table floors (id text primary key, project_id text not null references projects(id), name text not null);
create table rooms (id text primary key, project_id text not null references projects(id), floor_id text references floors(id),
  name text not null, status text not null, is_public integer not null, cleanup_minutes integer, config text not null);
create table users (id text primary key, email text, name text not null, profile_name text);
create table apps (id text primary key, env text not null, client_id text not null, service_user_id text references users(id));
create table app_projects (app_id text not null references apps(id), project_id text not null references projects(id),
  permissions text, primary key (app_id, project_id));
create table tokens (id text primary key, app_id text not null references apps(id), secret_hash text not null, env text not null,
  created_at int8 not null, expires_at int8 not null, revoked_at int8);
create index tokens_expiry_idx on tokens (expires_at);
create table webhooks (id text primary key, project_id text not null references projects(id), url text not null, events text not null,
  enabled integer not null);
create table meetings (id text primary key, project_id text not null references projects(id), asset_kind text not null,
  asset_id text not null, room_id text references rooms(id), desk_id text, title text not null, body text not null,
  start_at int8 not null, end_at int8 not null, booked_end_at int8 not null, span_end_at int8 not null,
  all_day integer not null, time_period text, status text not null, pin_enc text not null, pin_failures integer not null default 0,
  organizer_user_id text not null references users(id), organizer text not null, attendees text not null, app_id text,
  booked_via text, booked_by_user_id text, payment text, payment_due_at int8, billing_summaries text not null, recurrence text,
  cancel_reason text, created_at int8 not null, updated_at int8 not null);
create index meetings_project_start_idx on meetings (project_id, start_at);
create index meetings_organizer_idx on meetings (organizer_user_id, start_at);
create table meeting_slots (id text primary key, meeting_id text not null references meetings(id), project_id text not null,
  asset_id text not null, occurrence_index integer not null, start_at int8 not null, end_at int8 not null);
create index meeting_slots_asset_idx on meeting_slots (asset_id, start_at);
create index meeting_slots_project_idx on meeting_slots (project_id, start_at);
create index meeting_slots_meeting_idx on meeting_slots (meeting_id);
create table meeting_histories (id text primary key, meeting_id text not null references meetings(id), seq integer not null,
  action text not null, at int8 not null, by text not null, source text not null, source_detail text, reason text,
  status_before text, old_start_at int8, old_end_at int8, new_start_at int8, new_end_at int8, unique (meeting_id, seq));
create table timers (id text primary key, meeting_id text not null references meetings(id), kind text not null, due_at int8 not null,
  window_start int8 not null, window_end int8 not null, status text not null, created_at int8 not null, fired_at int8,
  trace_parent text);
create index timers_due_idx on timers (status, due_at);
create index timers_meeting_idx on timers (meeting_id);
create table events (id text primary key, project_id text not null, meeting_id text, type text not null, occurred_at int8 not null,
  data text not null);
create index events_project_idx on events (project_id, occurred_at);
create table deliveries (id text primary key, event_id text not null references events(id), webhook_id text not null references webhooks(id),
  type text not null, body text not null, status text not null, attempts integer not null, next_attempt_at int8,
  claimed_until int8, last_status integer, last_error text, created_at int8 not null, updated_at int8 not null, delivered_at int8,
  trace_parent text);
create index deliveries_due_idx on deliveries (status, next_attempt_at);
create index deliveries_webhook_idx on deliveries (webhook_id, created_at);
`;
