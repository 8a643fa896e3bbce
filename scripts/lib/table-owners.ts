/**
 * Table ownership, the one declaration `check:architecture` checks SQL against (the `tables` rule in
 * architecture.ts) and docs/architecture.md's ownership table must agree with (test/unit/architecture.test.ts).
 *
 * - `owners`: every table of platform/db/schema.ts → the one module whose repositories write it
 *   (`platform` for tables only platform code touches).
 * - `reads`: per module, the other modules' tables its repositories may read (select, join).
 * - `writes`: per module, the few other modules' tables its repositories may write (and read), each with why.
 */
export interface TableDeclaration {
  owners: Readonly<Record<string, string>>;
  reads: Readonly<Record<string, readonly string[]>>;
  writes: Readonly<Record<string, readonly { table: string; why: string }[]>>;
}

export const TABLES: TableDeclaration = {
  owners: {
    brands: 'site',
    projects: 'site',
    zones: 'site',
    floors: 'site',
    rooms: 'site',
    desks: 'site',
    users: 'site',
    memberships: 'site',
    apps: 'site',
    app_projects: 'site',
    app_links: 'site',
    app_access_groups: 'site',
    access_groups: 'site',
    devices: 'site',
    webhooks: 'site',
    promo_codes: 'site',
    payment_providers: 'site',
    calendar_connections: 'site',
    tokens: 'auth',
    token_families: 'auth',
    meetings: 'booking',
    meeting_slots: 'booking',
    meeting_histories: 'booking',
    meeting_attendees: 'booking',
    timers: 'lifecycle',
    events: 'webhooks',
    deliveries: 'webhooks',
    payments: 'payments',
    invoice_counters: 'payments',
    payment_inbox: 'payments',
    payment_provider_events: 'payments',
    payment_provider_actions: 'payments',
    member_groups: 'members',
    unit_residents: 'members',
    cards: 'members',
    faces: 'members',
    face_variants: 'members',
    calendar_events: 'calendar-sync',
    room_feeds: 'calendar-sync',
    calendar_rooms: 'calendar-sync',
    calendar_links: 'calendar-sync',
    calendar_outbox: 'calendar-sync',
    access_changes: 'devices',
    device_state: 'devices',
    device_targets: 'devices',
    device_commands: 'devices',
    device_enrollments: 'devices',
    door_windows: 'devices',
    device_user_numbers: 'devices',
    access_entries: 'devices',
    visitor_invites: 'visitors',
    visitor_entries: 'visitors',
    settings: 'platform',
    rate_limits: 'platform',
    console_sessions: 'platform',
    analytics_occurrences: 'analytics',
    analytics_rollups: 'analytics',
    analytics_assets: 'analytics',
    analytics_state: 'analytics',
  },
  // Not declared on purpose: catalogue's reads of meeting_slots and meetings (the conflict check moves into booking).
  reads: {
    analytics: ['meetings', 'projects', 'zones', 'floors', 'rooms', 'desks', 'users'],
    auth: ['apps', 'app_projects', 'app_links', 'users', 'memberships', 'projects'],
    booking: ['users', 'memberships', 'apps'],
    'calendar-sync': ['calendar_connections'],
    catalogue: ['projects', 'floors', 'rooms', 'desks'],
    devices: ['devices', 'access_groups', 'projects', 'rooms', 'desks'],
    members: ['apps', 'app_access_groups', 'access_groups', 'rooms'],
    payments: ['payment_providers'],
  },
  writes: {
    analytics: [
      { table: 'meeting_histories', why: 'analytics_at: the entries the figures have taken in (the job reads the rest)' },
      { table: 'access_entries', why: 'analytics_at: the walk-ins the figures have counted' },
    ],
    auth: [
      { table: 'users', why: 'an act_as token for a new external user creates a federated visitor member' },
      { table: 'memberships', why: "the federated visitor member's membership" },
      { table: 'app_links', why: "the federated visitor member's link to the app" },
    ],
    booking: [
      { table: 'users', why: "the app's service user, created on first use (a losing duplicate removed)" },
      { table: 'apps', why: "the app's service_user_id, set with it" },
      { table: 'projects', why: 'max_hold_ms raised to the longest hold (bounds the conflict read)' },
    ],
    members: [
      { table: 'users', why: "the partner's member PUT provisions the member's user" },
      { table: 'memberships', why: "the partner's member PUT provisions the membership" },
      { table: 'app_links', why: "the partner's member PUT links the member to the partner's app" },
    ],
    payments: [{ table: 'promo_codes', why: "a promo code's used_count, taken and given back with the payment" }],
    webhooks: [{ table: 'webhooks', why: "the listener's delivery state: consecutive failures, disabled, re-enabled" }],
  },
};
