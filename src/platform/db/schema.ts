import type { Generated } from 'kysely';

/**
 * Table types for Kysely. The same schema runs on SQLite and PostgreSQL:
 * instants are epoch milliseconds (bigint), booleans are 0/1 integers and
 * structured values are JSON text, so both engines behave identically.
 */

type Bool = number; // 0 | 1
type Json = string;
type Millis = number;

interface Timestamps {
  created_at: Millis;
  updated_at: Millis;
}

export interface BrandTable extends Timestamps {
  id: string;
  key: string | null;
  name: string;
}

export interface ProjectTable extends Timestamps {
  id: string;
  key: string | null;
  brand_id: string;
  name: string;
  timezone: string;
  currency: string;
  default_cleanup_minutes: number | null;
  booking_grid_minutes: number | null;
  backoffice_payment_due_minutes: number | null;
  /** Site document `analytics.namedReports` (0/1; null before migration 018 or when absent). */
  analytics_named_reports: Generated<number | null>;
  /** Longest hold (end + cleaning - start) ever booked in the project; bounds overlap look-ups. */
  max_hold_ms: Generated<number>;
}

export interface ZoneTable extends Timestamps {
  id: string;
  key: string | null;
  project_id: string;
  name: string;
}

export interface FloorTable extends Timestamps {
  id: string;
  key: string | null;
  project_id: string;
  zone_id: string;
  name: string;
}

interface AssetColumns extends Timestamps {
  id: string;
  key: string | null;
  brand_id: string;
  project_id: string;
  zone_id: string;
  floor_id: string;
  name: string;
  email: string | null;
  capacity: number;
  status: string;
  is_public: Bool;
  facilities: Json;
  picture_urls: Json;
  charge_rate: Json;
  config: Json;
}

export interface RoomTable extends AssetColumns {
  /** JSON array of device ids whose doors open for the room's bookings, or null. */
  access_devices: string | null;
  type: string;
  cleanup_minutes: number | null;
  equipments: Json;
  polygon: Json | null;
  address_no: string | null;
  unit_id: string | null;
}

export interface DeskTable extends AssetColumns {
  /** JSON array of device ids whose doors open for the desk's bookings, or null. */
  access_devices: string | null;
  desk_index: number;
  polygon: Json | null;
}

export interface UserTable extends Timestamps {
  id: string;
  key: string | null;
  email: string | null;
  email_lower: string | null;
  phone: string | null;
  username: string | null;
  name: string;
  first_name: string | null;
  last_name: string | null;
  profile_name: string | null;
  blocked_from_booking: Bool;
  brand_staff: Json;
}

export interface MembershipTable extends Timestamps {
  id: string;
  user_id: string;
  project_id: string;
  role: string; // member | admin
  user_type: string; // member | visitor
  source: string; // admin | partner | federated
  status: string; // active | deactivated
  employee_id: string | null;
}

export interface AppTable extends Timestamps {
  id: string;
  key: string | null;
  env: string;
  client_id: string;
  secret_hash: string;
  name: string;
  act_as: Bool;
  service_user_id: string | null;
}

export interface AppProjectTable {
  app_id: string;
  project_id: string;
  /** JSON array of permission names; null when the app has no role on the project. */
  permissions: Json | null;
}

export interface AppLinkTable {
  id: string;
  app_id: string;
  user_id: string;
  external_user_id: string;
  created_at: Millis;
}

export interface AppAccessGroupTable {
  app_id: string;
  access_group_id: string;
}

export interface AccessGroupTable extends Timestamps {
  id: string;
  key: string | null;
  project_id: string;
  name: string;
}

export interface DeviceTable extends Timestamps {
  id: string;
  key: string | null;
  access_group_id: string;
  name: string;
  kind: string;
  location_en: string | null;
  location_th: string | null;
  /** The card format the device's readers expect; null is decimal-reversed. */
  card_format: string | null;
  /** isapi | zkteco-push; null: the DEVICE_TRANSPORT default (sandbox or mqtt). */
  transport_kind: string | null;
  /** JSON: ISAPI {baseUrl, username}, ZKTeco {serialNumber}. */
  transport_json: string | null;
  /** The ISAPI password or ZKTeco commKey, sealed. */
  transport_secret_enc: string | null;
}

export interface WebhookTable extends Timestamps {
  id: string;
  key: string | null;
  project_id: string;
  url: string;
  secret_enc: string;
  events: Json;
  /** Encrypted JSON of the delivery auth scheme (it may hold tokens). */
  auth_enc: string;
  enabled: Bool;
  consecutive_failures: number;
}

export interface PromoCodeTable extends Timestamps {
  id: string;
  key: string | null;
  project_id: string;
  code: string;
  name: string;
  percent_off: number | null;
  amount_off: number | null;
  active: Bool;
  /** Usable from this instant on; null = no start. */
  valid_from: Millis | null;
  /** Usable before this instant; null = no end. */
  valid_until: Millis | null;
  /** Most uses allowed; null = no limit. */
  max_uses: number | null;
  /** Uses so far; written by payments, not by the site apply. */
  used_count: Generated<number>;
}

export interface TokenFamilyTable {
  id: string;
  app_id: string;
  user_id: string | null;
  env: string;
  grant_type: string;
  created_at: Millis;
  revoked_at: Millis | null;
  revoked_reason: string | null;
}

export interface TokenTable {
  id: string;
  family_id: string;
  kind: string; // access | refresh
  secret_hash: string;
  env: string;
  created_at: Millis;
  expires_at: Millis;
  rotated_at: Millis | null;
  revoked_at: Millis | null;
}

export interface SettingTable {
  name: string;
  value: string;
}

export interface Database {
  brands: BrandTable;
  projects: ProjectTable;
  zones: ZoneTable;
  floors: FloorTable;
  rooms: RoomTable;
  desks: DeskTable;
  users: UserTable;
  memberships: MembershipTable;
  apps: AppTable;
  app_projects: AppProjectTable;
  app_links: AppLinkTable;
  app_access_groups: AppAccessGroupTable;
  access_groups: AccessGroupTable;
  devices: DeviceTable;
  webhooks: WebhookTable;
  promo_codes: PromoCodeTable;
  token_families: TokenFamilyTable;
  tokens: TokenTable;
  settings: SettingTable;
  meetings: MeetingTable;
  meeting_slots: MeetingSlotTable;
  meeting_histories: MeetingHistoryTable;
  meeting_attendees: MeetingAttendeeTable;
  timers: TimerTable;
  events: EventTable;
  payments: PaymentTable;
  invoice_counters: InvoiceCounterTable;
  payment_inbox: PaymentInboxTable;
  payment_providers: PaymentProviderTable;
  payment_provider_events: PaymentProviderEventTable;
  payment_provider_actions: PaymentProviderActionTable;
  member_groups: MemberGroupTable;
  unit_residents: UnitResidentTable;
  cards: CardTable;
  faces: FaceTable;
  face_variants: FaceVariantTable;
  access_changes: AccessChangeTable;
  device_state: DeviceStateTable;
  device_targets: DeviceSubjectStateTable;
  device_commands: DeviceCommandTable;
  device_enrollments: DeviceEnrollmentTable;
  door_windows: DoorWindowTable;
  device_user_numbers: DeviceUserNumberTable;
  access_entries: AccessEntryTable;
  analytics_occurrences: AnalyticsOccurrenceTable;
  analytics_rollups: AnalyticsRollupTable;
  analytics_assets: AnalyticsAssetTable;
  analytics_state: AnalyticsStateTable;
  visitor_invites: VisitorInviteTable;
  visitor_entries: VisitorEntryTable;
  calendar_events: CalendarEventTable;
  room_feeds: RoomFeedTable;
  calendar_connections: CalendarConnectionTable;
  calendar_rooms: CalendarRoomTable;
  calendar_links: CalendarLinkTable;
  calendar_outbox: CalendarOutboxTable;
  rate_limits: RateLimitTable;
  console_sessions: ConsoleSessionTable;
  deliveries: DeliveryTable;
}

export interface TimerTable {
  id: string;
  meeting_id: string;
  kind: string;
  due_at: Millis;
  window_start: Millis;
  window_end: Millis;
  status: string; // pending | fired | skipped | cancelled
  created_at: Millis;
  fired_at: Millis | null;
  /** W3C traceparent of the request that scheduled it (tracing on); null otherwise (migration 014). */
  trace_parent: string | null;
}

export interface PaymentTable {
  id: string;
  project_id: string;
  meeting_id: string;
  kind: string; // checkout | quote | extension
  invoice_no: string;
  currency: string;
  amount_minor: number;
  /** JSON {subtotal, total, discounts[]} in major units. */
  summary: Json;
  status: string; // pending | settled | voided | expired | refunded
  provider: string;
  provider_ref: string | null;
  expires_at: Millis;
  nudge_at: Millis | null;
  redirect_url: string | null;
  promo_code_id: string | null;
  restore: Json | null;
  failed_attempts: Generated<number>;
  settled_at: Millis | null;
  created_at: Millis;
  updated_at: Millis;
  /** The `payment_providers` account it was opened with; null for the sandbox. */
  provider_id: string | null;
  /** JSON: what the page shows from the provider's answer (CheckoutDisplay). */
  provider_display: Json | null;
  /** Real time the provider was last asked about it (reconciliation). */
  reconciled_at: Millis | null;
}

/** A project's payment provider account (site document `paymentProviders`). */
export interface PaymentProviderTable {
  id: string;
  key: string | null;
  project_id: string;
  provider: string; // stripe | opn
  secret_key_enc: string;
  webhook_secret_enc: string;
  /** JSON array: promptpay, card. */
  methods: Json;
  api_base_url: string | null;
  created_at: Millis;
  updated_at: Millis;
}

/** An event a provider posted to /payments/webhooks/{providerId}. */
export interface PaymentProviderEventTable {
  id: string;
  provider_id: string;
  event_id: string;
  type: string;
  verified: Bool;
  payment_id: string | null;
  provider_ref: string | null;
  outcome: string | null;
  /** Real time. */
  received_at: Millis;
}

/** A void or refund owed to a provider (outbox, carried out by a job). */
export interface PaymentProviderActionTable {
  id: string;
  payment_id: string;
  provider_id: string | null;
  provider: string;
  action: string; // void | refund
  amount_minor: number;
  status: string; // queued | pending | succeeded | failed
  reason: string | null;
  provider_ref: string | null;
  attempts: Generated<number>;
  /** Real time. */
  next_attempt_at: Millis | null;
  last_error: string | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface PaymentInboxTable {
  id: string;
  provider: string;
  provider_event_id: string;
  payment_id: string;
  kind: string; // settle | fail
  via: string;
  /** Real time. */
  received_at: Millis;
  processed_at: Millis | null;
  outcome: string | null;
  attempts: Generated<number>;
  last_error: string | null;
}

export interface MemberGroupTable {
  user_id: string;
  access_group_id: string;
  project_id: string;
  created_at: Millis;
}

export interface UnitResidentTable {
  project_id: string;
  user_id: string;
  room_id: string;
  role: string; // owner | participant
  created_at: Millis;
}

export interface CardTable {
  id: string;
  project_id: string;
  user_id: string;
  /** Decoded 4-byte UID, 8 uppercase hex digits. */
  uid: string;
  label: string;
  type: string; // real | virtual
  generated: Bool;
  status: string; // active | revoked
  created_at: Millis;
  revoked_at: Millis | null;
}

export interface FaceTable {
  project_id: string;
  user_id: string;
  /** Sealed with the secrets key. */
  image_enc: string;
  mime: string;
  sha256: string;
  consent_at: Millis;
  consent_text: string;
  updated_at: Millis;
}

/** A face picture derived for a device profile (sealed), or why none could be made. */
export interface FaceVariantTable {
  project_id: string;
  user_id: string;
  profile: string;
  source_sha256: string;
  image_enc: string | null;
  mime: string | null;
  sha256: string | null;
  refused: string | null;
  created_at: Millis;
}

/** Device-enrollment outbox: a subject's access changed (written with the change). */
export interface AccessChangeTable {
  id: string;
  project_id: string;
  /** member | visitor (default member). */
  subject_kind: Generated<string>;
  /** The member's user id, or the visitor invite's id. */
  user_id: string;
  reason: string;
  created_at: Millis;
  processed_at: Millis | null;
}

export interface RateLimitTable {
  key: string;
  window_start: Millis;
  count: number;
}

/** A console session (platform/http/console-session.ts): the SHA-256 of its id, never the id. */
export interface ConsoleSessionTable {
  id_hash: string;
  env: string;
  created_at: Millis;
  expires_at: Millis;
  revoked_at: Millis | null;
}

export interface InvoiceCounterTable {
  project_id: string;
  last_no: number;
}

export interface EventTable {
  id: string;
  project_id: string;
  meeting_id: string | null;
  type: string;
  occurred_at: Millis;
  /** JSON of the event's `data`. */
  data: Json;
}

export interface DeliveryTable {
  /** `whk_<uuid>`: the body `id` and the X-Service-Delivery header. */
  id: string;
  event_id: string;
  webhook_id: string;
  type: string;
  /** The exact JSON body sent (and signed). */
  body: string;
  status: string; // pending | delivered | failed
  attempts: number;
  next_attempt_at: Millis | null;
  claimed_until: Millis | null;
  last_status: number | null;
  last_error: string | null;
  created_at: Millis;
  updated_at: Millis;
  delivered_at: Millis | null;
  /** W3C traceparent of the request that queued it (tracing on); null otherwise (migration 014). */
  trace_parent: string | null;
}

export interface MeetingAttendeeTable {
  meeting_id: string;
  position: number;
  user_id: string | null;
  email_lower: string;
}

export interface MeetingTable {
  id: string;
  project_id: string;
  asset_kind: string; // room | desk
  asset_id: string;
  room_id: string | null;
  desk_id: string | null;
  title: string;
  body: string;
  start_at: Millis;
  end_at: Millis;
  /** The end as booked; end_at moves earlier on check-out. */
  booked_end_at: Millis;
  /** End of the last occurrence (= end_at for a single booking); bounds list queries. */
  span_end_at: Millis;
  all_day: Bool;
  time_period: string | null;
  status: string;
  pin_enc: string;
  pin_failures: Generated<number>;
  organizer_user_id: string;
  /** JSON snapshot {email, name, displayName, checkInDateTime, checkOutDateTime}. */
  organizer: Json;
  attendees: Json;
  app_id: string | null;
  booked_via: string | null;
  booked_by_user_id: string | null;
  payment: Json | null;
  payment_due_at: Millis | null;
  billing_summaries: Json;
  recurrence: string | null;
  cancel_reason: string | null;
  created_at: Millis;
  updated_at: Millis;
}

/** One held window of a booking (one per occurrence of a series). Deleted when the hold is released. */
export interface MeetingSlotTable {
  id: string;
  meeting_id: string;
  project_id: string;
  asset_id: string;
  occurrence_index: number;
  start_at: Millis;
  end_at: Millis;
}

export interface MeetingHistoryTable {
  id: string;
  meeting_id: string;
  seq: number;
  action: string;
  at: Millis;
  by: string;
  source: string;
  source_detail: string | null;
  reason: string | null;
  status_before: string | null;
  old_start_at: Millis | null;
  old_end_at: Millis | null;
  new_start_at: Millis | null;
  new_end_at: Millis | null;
  /** When the analytics job took the entry into its figures; null until then (migration 018). */
  analytics_at: Generated<Millis | null>;
}

/** Per device: sync cursor, retry schedule, lease, reachability. */
export interface DeviceStateTable {
  device_id: string;
  online: Bool;
  next_seq: number;
  attempts: number;
  next_attempt_at: Millis;
  claimed_until: Millis | null;
  last_synced_at: Millis | null;
  last_error: string | null;
  updated_at: Millis;
  /** Real time a pull device (ZKTeco PUSH) last polled. */
  last_seen_at: Millis | null;
  /** JSON: what a pull device has uploaded so far (its log stamps). */
  pull_cursor: string | null;
}

/** A booking participant's validity window on the booking asset's access devices. */
export interface DoorWindowTable {
  meeting_id: string;
  user_id: string;
  project_id: string;
  /** JSON array of device ids. */
  device_ids: string;
  valid_from: Millis;
  valid_until: Millis;
  updated_at: Millis;
}

/** The number a subject has on devices that key users by a number (ZKTeco PIN). */
export interface DeviceUserNumberTable {
  subject_kind: string;
  subject_id: string;
  user_no: number;
}

/** One access event from a device (the entry log). */
export interface AccessEntryTable {
  id: string;
  project_id: string;
  device_id: string;
  event_key: string;
  subject_kind: string;
  subject_id: string | null;
  credential_kind: string;
  granted: Bool;
  device_at: Millis;
  received_at: Millis;
  asset_kind: string | null;
  asset_id: string | null;
  outcome: string;
  meeting_id: string | null;
  processed_at: Millis | null;
  /** When the analytics job counted the walk-in; null until then (migration 018). */
  analytics_at: Generated<Millis | null>;
}

/** A subject's credential set on one device: the planned target, or what the device holds. */
export interface DeviceSubjectStateTable {
  device_id: string;
  subject_kind: string;
  subject_id: string;
  /** JSON of a SubjectState (modules/devices/rules). */
  state: string;
  updated_at: Millis;
}

export interface DeviceEnrollmentTable extends DeviceSubjectStateTable {
  /** Sequence number of the command whose acknowledgement wrote this row. */
  seq: number;
}

export interface DeviceCommandTable {
  id: string;
  device_id: string;
  seq: number;
  subject_kind: string;
  subject_id: string;
  op: string; // upsert | remove
  state: string | null;
  status: string; // pending | done | failed
  attempts: number;
  last_error: string | null;
  created_at: Millis;
  done_at: Millis | null;
}

export interface VisitorInviteTable {
  id: string;
  project_id: string;
  host_user_id: string;
  visitor_name: string;
  visitor_email: string | null;
  start_at: Millis;
  end_at: Millis;
  end_given: Bool;
  license_plate: string | null;
  plate_key: string | null;
  visit_purpose: string | null;
  qr_enc: string;
  qr_tag: string;
  cancelled_at: Millis | null;
  withdrawn_at: Millis | null;
  created_at: Millis;
  /** The booking the visitor is invited to, or null. */
  meeting_id: string | null;
}

export interface VisitorEntryTable {
  id: string;
  invite_id: string;
  device_id: string;
  entry_type: string; // card | license-plate
  at: Millis;
}

/** One calendar invitation (provider, room, UID) and what the service did with it. */
export interface CalendarEventTable {
  provider: string;
  room_id: string;
  uid: string;
  meeting_id: string | null;
  sequence: number;
  dtstamp: Millis | null;
  last_hash: string;
  last_reply: string;
  created_at: Millis;
  updated_at: Millis;
}

/** A room's secret feed address (the token sealed, and its keyed tag for lookups). */
export interface RoomFeedTable {
  room_id: string;
  token_enc: string;
  token_tag: string;
  created_at: Millis;
}

/** A project's connection to Microsoft 365 or Google Workspace (site document `calendarConnections`). */
export interface CalendarConnectionTable {
  id: string;
  key: string | null;
  project_id: string;
  provider: string; // microsoft | google
  tenant_id: string | null;
  client_id: string | null;
  service_account_email: string | null;
  subject: string | null;
  /** Microsoft's client secret or Google's private key, sealed. */
  secret_enc: string;
  api_base_url: string | null;
  token_url: string | null;
  created_at: Millis;
  updated_at: Millis;
}

/** One room's calendar under one connection: its subscription or channel and its sync state (times real). */
export interface CalendarRoomTable {
  connection_id: string;
  room_id: string;
  calendar_id: string;
  status: string; // active | removed
  subscription_id: string | null;
  resource_id: string | null;
  client_state_enc: string | null;
  expires_at: Millis | null;
  cursor: string | null;
  cursor_at: Millis | null;
  subscribe_due_at: Millis | null;
  sync_due_at: Millis | null;
  subscribe_lease_until: Millis | null;
  sync_lease_until: Millis | null;
  subscribe_attempts: Generated<number>;
  sync_attempts: Generated<number>;
  last_sync_at: Millis | null;
  last_error: string | null;
  last_error_at: Millis | null;
  changes_in: Generated<number>;
  changes_out: Generated<number>;
  created_at: Millis;
  updated_at: Millis;
}

/** A provider event and the booking it stands for (imported, or written out by the service). */
export interface CalendarLinkTable {
  connection_id: string;
  room_id: string;
  uid: string;
  remote_id: string;
  meeting_id: string | null;
  occurrence_id: string;
  origin: string; // remote | service
  etag: string | null;
  written_hash: string | null;
  written_start: Millis | null;
  written_end: Millis | null;
  gone: Generated<number>;
  created_at: Millis;
  updated_at: Millis;
}

/** A write owed to a provider: a booking's event, or the room's answer to an invitation (real time). */
export interface CalendarOutboxTable {
  id: string;
  connection_id: string;
  room_id: string;
  kind: string; // booking | answer
  meeting_id: string | null;
  uid: string | null;
  due_at: Millis;
  version: Generated<number>;
  lease_until: Millis | null;
  attempts: Generated<number>;
  last_error: string | null;
  created_at: Millis;
}

/** What one occurrence of a booking adds to the analytics figures (migration 018). */
export interface AnalyticsOccurrenceTable {
  meeting_id: string;
  occurrence_id: string;
  project_id: string;
  asset_kind: string;
  asset_id: string;
  organizer_user_id: string;
  start_at: Millis;
  /** 1: counted and not cancelled before its start. */
  held: number;
  booked: number;
  no_show: number;
  checked_in: number;
  /** JSON array of buckets (modules/analytics/rules/booking-figures.ts). */
  buckets: string;
}

/** Sums of the figures per level, asset or project, and local period (migration 018). */
export interface AnalyticsRollupTable {
  project_id: string;
  asset_kind: string;
  level: string;
  asset_id: string;
  period: string;
  slot: number;
  booked: number;
  occupied: number;
  released: number;
  bookings: number;
  check_ins: number;
  no_shows: number;
  cancellations: number;
  walk_ins: number;
  held: number;
}

/** An asset's opening hours, zone and status from a local day on (migration 018). */
export interface AnalyticsAssetTable {
  asset_id: string;
  from_day: string;
  project_id: string;
  asset_kind: string;
  hours: string;
  timezone: string;
  active: number;
  source_mark: string;
}

/** The analytics job's lease (migration 018). */
export interface AnalyticsStateTable {
  name: string;
  lease_until: Millis;
  lease_owner: string;
}
