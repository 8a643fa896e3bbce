/** The site module's service: declarative site apply, and whether any site has been applied yet. */
import type { SiteDocument } from '../../contract/site-document.js';
import type { ApplyResult } from '../../contract/ops.js';
import { applySite, type ApplyOptions } from './apply-site.js';
import type { SiteRepository } from './site-repository.js';

export interface SiteProject {
  id: string;
  name: string;
  /** IANA time zone, e.g. Asia/Bangkok. */
  timezone: string;
}

export interface ProjectMember {
  id: string;
  name: string;
  email: string | null;
}

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

  /** A project's name and IANA time zone (other modules read projects through this). */
  project(id: string): Promise<SiteProject | undefined> {
    return this.repo.project(id);
  }

  /** A user's name and email, whatever their memberships. */
  user(id: string): Promise<ProjectMember | undefined> {
    return this.repo.userContact(id);
  }

  /** A user who holds an active membership in the project, with name and email; undefined otherwise. */
  projectMember(projectId: string, userId: string): Promise<ProjectMember | undefined> {
    return this.repo.projectMember(projectId, userId);
  }

}
