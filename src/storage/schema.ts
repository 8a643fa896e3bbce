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
  type: string;
  cleanup_minutes: number | null;
  equipments: Json;
  polygon: Json | null;
  address_no: string | null;
  unit_id: string | null;
}

export interface DeskTable extends AssetColumns {
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
}
