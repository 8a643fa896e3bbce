/**
 * 001: the site model (brands .. assets), people (users, memberships), apps and
 * their tokens, access groups, webhook listeners, promo codes and settings.
 */
import type { Kysely } from 'kysely';
import type { CreateTableBuilder } from 'kysely';

type T = CreateTableBuilder<string, never>;

const timestamps = (t: T): T =>
  t.addColumn('created_at', 'bigint', (c) => c.notNull()).addColumn('updated_at', 'bigint', (c) => c.notNull());

/** id, operator key, owning project and name: zones and access groups. */
const namedInProject = (t: T): T =>
  timestamps(
    t
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('key', 'text', (c) => c.unique())
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
      .addColumn('name', 'text', (c) => c.notNull()),
  );

const assetColumns = (t: T): T =>
  timestamps(
    t
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('key', 'text', (c) => c.unique())
      .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id'))
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
      .addColumn('zone_id', 'text', (c) => c.notNull().references('zones.id'))
      .addColumn('floor_id', 'text', (c) => c.notNull().references('floors.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('email', 'text')
      .addColumn('capacity', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('is_public', 'integer', (c) => c.notNull())
      .addColumn('facilities', 'text', (c) => c.notNull())
      .addColumn('picture_urls', 'text', (c) => c.notNull())
      .addColumn('charge_rate', 'text', (c) => c.notNull())
      .addColumn('config', 'text', (c) => c.notNull())
      .addColumn('polygon', 'text'),
  );

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('brands')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .$call(timestamps)
    .execute();

  await db.schema
    .createTable('projects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.unique())
    .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('default_cleanup_minutes', 'integer')
    .addColumn('booking_grid_minutes', 'integer')
    .addColumn('backoffice_payment_due_minutes', 'integer')
    .$call(timestamps)
    .execute();

  await db.schema.createTable('zones').$call(namedInProject).execute();

  await db.schema
    .createTable('floors')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.unique())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('zone_id', 'text', (c) => c.notNull().references('zones.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .$call(timestamps)
    .execute();

  await db.schema
    .createTable('rooms')
    .$call(assetColumns)
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('cleanup_minutes', 'integer')
    .addColumn('equipments', 'text', (c) => c.notNull())
    .addColumn('address_no', 'text')
    .addColumn('unit_id', 'text')
    .execute();
  await db.schema.createIndex('rooms_project_idx').on('rooms').columns(['project_id', 'name']).execute();

  await db.schema
    .createTable('desks')
    .$call(assetColumns)
    .addColumn('desk_index', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('desks_project_idx').on('desks').columns(['project_id', 'desk_index']).execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.unique())
    .addColumn('email', 'text')
    .addColumn('email_lower', 'text', (c) => c.unique())
    .addColumn('phone', 'text', (c) => c.unique())
    .addColumn('username', 'text', (c) => c.unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text')
    .addColumn('last_name', 'text')
    .addColumn('profile_name', 'text')
    .addColumn('blocked_from_booking', 'integer', (c) => c.notNull())
    .addColumn('brand_staff', 'text', (c) => c.notNull())
    .$call(timestamps)
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('user_type', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('employee_id', 'text')
    .addUniqueConstraint('memberships_user_project_uq', ['user_id', 'project_id'])
    .addUniqueConstraint('memberships_employee_uq', ['project_id', 'employee_id'])
    .$call(timestamps)
    .execute();

  await db.schema
    .createTable('apps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key', 'text')
    .addColumn('env', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('act_as', 'integer', (c) => c.notNull())
    .addUniqueConstraint('apps_env_key_uq', ['env', 'key'])
    .addUniqueConstraint('apps_env_client_uq', ['env', 'client_id'])
    .$call(timestamps)
    .execute();

  await db.schema
    .createTable('app_projects')
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('permissions', 'text')
    .addPrimaryKeyConstraint('app_projects_pk', ['app_id', 'project_id'])
    .execute();

  await db.schema
    .createTable('app_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('external_user_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('app_links_external_uq', ['app_id', 'external_user_id'])
    .addUniqueConstraint('app_links_user_uq', ['app_id', 'user_id'])
    .execute();

  await db.schema.createTable('access_groups').$call(namedInProject).execute();

  await db.schema
    .createTable('devices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.unique())
    .addColumn('access_group_id', 'text', (c) => c.notNull().references('access_groups.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .$call(timestamps)
    .execute();

  await db.schema
    .createTable('app_access_groups')
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
    .addColumn('access_group_id', 'text', (c) => c.notNull().references('access_groups.id'))
    .addPrimaryKeyConstraint('app_access_groups_pk', ['app_id', 'access_group_id'])
    .execute();

  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.unique())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret_enc', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('auth_enc', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull())
    .$call(timestamps)
    .execute();

  await db.schema
    .createTable('promo_codes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.unique())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('percent_off', 'real')
    .addColumn('amount_off', 'real')
    .addColumn('active', 'integer', (c) => c.notNull())
    .addUniqueConstraint('promo_codes_project_code_uq', ['project_id', 'code'])
    .$call(timestamps)
    .execute();

  await db.schema
    .createTable('token_families')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
    .addColumn('user_id', 'text', (c) => c.references('users.id'))
    .addColumn('env', 'text', (c) => c.notNull())
    .addColumn('grant_type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('revoked_reason', 'text')
    .execute();

  await db.schema
    .createTable('tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('family_id', 'text', (c) => c.notNull().references('token_families.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('env', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('rotated_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('tokens_family_idx').on('tokens').column('family_id').execute();
  await db.schema.createIndex('tokens_expiry_idx').on('tokens').column('expires_at').execute();

  await db.schema
    .createTable('settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'settings',
    'tokens',
    'token_families',
    'promo_codes',
    'webhooks',
    'app_access_groups',
    'devices',
    'access_groups',
    'app_links',
    'app_projects',
    'apps',
    'memberships',
    'users',
    'desks',
    'rooms',
    'floors',
    'zones',
    'projects',
    'brands',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
