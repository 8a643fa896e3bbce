/** The built-in demo site (DEMO=1): applied through the same site apply on an empty database; yields the demo app credentials. */
import { Value } from 'typebox/value';
import type { Services } from '../../services.js';
import { verifyPassword } from '../../platform/crypto/secrets.js';
import { SiteService } from '../site/site-service.js';
import { SiteDocument } from '../../contract/site-document.js';
import { TokenRepository } from '../auth/token-repository.js';
import demoJson from './demo-site.json' with { type: 'json' };

export interface DemoCredentials {
  appId: string;
  appSecret: string;
}

/** The demo document, checked against the site schema (a broken demo file fails loudly at start). */
export function demoSiteDocument(): SiteDocument {
  if (!Value.Check(SiteDocument, demoJson)) {
    const first = [...Value.Errors(SiteDocument, demoJson)].slice(0, 5).map((e) => `${e.instancePath} ${e.message}`);
    throw new Error(`demo-site.json does not match the site document schema: ${first.join('; ')}`);
  }
  return demoJson as SiteDocument;
}

/**
 * Applies the demo site when the database has no project yet. Returns the demo
 * app's credentials whenever that app exists in this environment with the
 * document's secret (also on later starts), else null. Never runs in
 * production: the demo secret is published.
 */
export async function applyDemoSiteIfEmpty(services: Services): Promise<DemoCredentials | null> {
  if (services.config.env === 'production') return null;
  const doc = demoSiteDocument();
  const db = services.storage.db;
  const site = SiteService.over(db);
  if (!(await site.hasAnyProject())) {
    await site.apply(doc, { env: services.config.env, secretBox: services.secretBox, now: services.clock.now() });
  }
  const demoApp = doc.apps?.[0];
  if (!demoApp) return null;
  const stored = await new TokenRepository(db).findApp(services.config.env, demoApp.appId);
  if (!stored || !(await verifyPassword(demoApp.appSecret, stored.secretHash))) return null;
  return { appId: demoApp.appId, appSecret: demoApp.appSecret };
}
