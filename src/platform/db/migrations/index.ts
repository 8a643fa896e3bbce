/** Versioned migrations, applied in name order at start-up on either engine. */
import type { Migration, MigrationProvider } from 'kysely';
import * as m001 from './001-initial-schema.js';
import * as m002 from './002-meetings.js';
import * as m003 from './003-timers-and-webhooks.js';
import * as m004 from './004-promo-code-limits.js';
import * as m005 from './005-payments.js';
import * as m006 from './006-payment-inbox.js';
import * as m007 from './007-members.js';
import * as m008 from './008-devices-visitors.js';
import * as m009 from './009-calendar-sync.js';
import * as m010 from './010-delivery-due-index.js';
import * as m011 from './011-catalogue-indexes.js';
import * as m012 from './012-console-sessions.js';
import * as m013 from './013-face-variants.js';
import * as m014 from './014-trace-context.js';
import * as m015 from './015-payment-providers.js';
import * as m016 from './016-calendar-connections.js';
import * as m017 from './017-door-access.js';
import * as m018 from './018-analytics.js';
import * as m019 from './019-scale-indexes.js';
import * as m020 from './020-device-scale.js';
import * as m021 from './021-job-wake.js';
import * as m022 from './022-series-span.js';
import * as m023 from './023-pending-commands.js';

/** Every migration this code knows, by name (applied in name order). */
export const migrations: Readonly<Record<string, Migration>> = {
  '001-initial-schema': m001,
  '002-meetings': m002,
  '003-timers-and-webhooks': m003,
  '004-promo-code-limits': m004,
  '005-payments': m005,
  '006-payment-inbox': m006,
  '007-members': m007,
  '008-devices-visitors': m008,
  '009-calendar-sync': m009,
  '010-delivery-due-index': m010,
  '011-catalogue-indexes': m011,
  '012-console-sessions': m012,
  '013-face-variants': m013,
  '014-trace-context': m014,
  '015-payment-providers': m015,
  '016-calendar-connections': m016,
  '017-door-access': m017,
  '018-analytics': m018,
  '019-scale-indexes': m019,
  '020-device-scale': m020,
  '021-job-wake': m021,
  '022-series-span': m022,
  '023-pending-commands': m023,
};

export const migrationProvider: MigrationProvider = providerOf(migrations);

/** A provider of the given migrations (tests hand one a subset: an older release's set). */
export function providerOf(set: Readonly<Record<string, Migration>>): MigrationProvider {
  return { getMigrations: async () => ({ ...set }) };
}
