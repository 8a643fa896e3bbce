/** Versioned migrations, applied in name order at start-up on either engine. */
import type { Migration, MigrationProvider } from 'kysely';
import * as m001 from './001-initial-schema.js';
import * as m002 from './002-meetings.js';

const migrations: Record<string, Migration> = {
  '001-initial-schema': m001,
  '002-meetings': m002,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
