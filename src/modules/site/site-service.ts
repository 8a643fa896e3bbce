/** The site module's service: declarative site apply, and whether any site has been applied yet. */
import type { SiteDocument } from '../../contract/site-document.js';
import type { ApplyResult } from '../../contract/ops.js';
import { applySite, type ApplyOptions } from './apply-site.js';
import type { SiteRepository } from './site-repository.js';

export class SiteService {
  private readonly applied: (() => void)[] = [];

  constructor(private readonly repo: SiteRepository) {}

  /** Upserts every entity of `doc` by key, all or nothing (see applySite). */
  async apply(doc: SiteDocument, opts: ApplyOptions): Promise<ApplyResult> {
    const result = await applySite(this.repo, doc, opts);
    for (const listener of this.applied) listener();
    return result;
  }

  /** Called after every successful apply (devices re-check what each device must hold: groups and devices may have changed). */
  onApplied(listener: () => void): void {
    this.applied.push(listener);
  }

  /** Whether the database holds any project yet (the demo site is applied only to an empty one). */
  hasAnyProject(): Promise<boolean> {
    return this.repo.hasAnyProject();
  }
}
