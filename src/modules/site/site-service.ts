/** The site module's service: declarative site apply, and whether any site has been applied yet. */
import type { SiteDocument } from '../../contract/site-document.js';
import type { ApplyResult } from '../../contract/ops.js';
import { applySite, type ApplyOptions } from './apply-site.js';
import type { SiteRepository } from './site-repository.js';

export class SiteService {
  constructor(private readonly repo: SiteRepository) {}

  /** Upserts every entity of `doc` by key, all or nothing (see applySite). */
  apply(doc: SiteDocument, opts: ApplyOptions): Promise<ApplyResult> {
    return applySite(this.repo, doc, opts);
  }

  /** Whether the database holds any project yet (the demo site is applied only to an empty one). */
  hasAnyProject(): Promise<boolean> {
    return this.repo.hasAnyProject();
  }
}
