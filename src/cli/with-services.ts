/**
 * What the command-line tools that need the whole service share: open the database, build the
 * services (no workers started), run the work, then stop the services and close the database.
 */
import type { Config } from '../platform/config.js';
import { openStorage } from '../platform/db/database.js';
import { createServices, type Services } from '../services.js';

export async function withServices<T>(config: Config, work: (services: Services) => Promise<T>): Promise<T> {
  const storage = await openStorage(config.databaseUrl);
  try {
    const services = await createServices(config, storage);
    try {
      return await work(services);
    } finally {
      await services.stop();
    }
  } finally {
    await storage.close();
  }
}
