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

export interface SiteDevice {
  id: string;
  projectId: string;
  name: string;
  kind: string;
  location: { en: string; th: string } | null;
}

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

  /** A device of the site document: its project, name, kind and display location (null when it has none). */
  async device(id: string): Promise<SiteDevice | undefined> {
    const d = await this.repo.device(id);
    if (!d) return undefined;
    const location = d.location_en !== null || d.location_th !== null ? { en: d.location_en ?? d.location_th!, th: d.location_th ?? d.location_en! } : null;
    return { id: d.id, projectId: d.project_id, name: d.name, kind: d.kind, location };
  }
}
