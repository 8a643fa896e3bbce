/** The built-in demo site (DEMO=1): applied through the same site apply on an empty database; yields the demo app credentials. */
import { Value } from 'typebox/value';
import type { BookingEnv } from '../../platform/config.js';
import type { SiteService } from '../site/index.js';
import type { TokenService } from '../auth/index.js';
import { SiteDocument } from '../../contract/site-document.js';
import demoJson from './demo-site.json' with { type: 'json' };

/** What applying the demo needs (the composed Services provide all of it). */
export interface DemoDeps {
  config: { env: BookingEnv };
  site: Pick<SiteService, 'hasAnyProject' | 'apply'>;
  tokens: Pick<TokenService, 'appSecretMatches'>;
}

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
export async function applyDemoSiteIfEmpty(deps: DemoDeps): Promise<DemoCredentials | null> {
  if (deps.config.env === 'production') return null;
  const doc = demoSiteDocument();
  if (!(await deps.site.hasAnyProject())) {
    // Applied like an ops document: in this environment, at service time (the demo holds no webhook URLs to check).
    await deps.site.apply(doc);
  }
  const demoApp = doc.apps?.[0];
  if (!demoApp) return null;
  if (!(await deps.tokens.appSecretMatches(demoApp.appId, demoApp.appSecret))) return null;
  return { appId: demoApp.appId, appSecret: demoApp.appSecret };
}
