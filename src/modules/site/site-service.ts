/** The site module's service: declarative site apply, and whether any site has been applied yet. */
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { SiteDocument } from '../../contract/site-document.js';
import { applySite, type ApplyOptions, type ApplyResult } from './apply-site.js';
import { SiteRepository } from './site-repository.js';

export class SiteService {
  constructor(private readonly repo: SiteRepository) {}

  /** A site service over this database (until the composition root wires one into Services). */
  static over(db: Kysely<Database>): SiteService {
    return new SiteService(new SiteRepository(db));
  }

  /** Upserts every entity of `doc` by key, all or nothing (see applySite). */
  apply(doc: SiteDocument, opts: ApplyOptions): Promise<ApplyResult> {
    return applySite(this.repo, doc, opts);
  }

  /** Whether the database holds any project yet (the demo site is applied only to an empty one). */
  hasAnyProject(): Promise<boolean> {
    return this.repo.hasAnyProject();
  }
}
