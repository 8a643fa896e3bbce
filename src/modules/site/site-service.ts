/** The site module's service: declarative site apply, and whether any site has been applied yet. */
import { groupBy } from '../../platform/group-by.js';
import type { SiteDocument } from '../../contract/site-document.js';
import type { ApplyResult } from '../../contract/ops.js';
import type { ConsoleSite } from '../../contract/ops-console.js';
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import { applySite } from './apply-site.js';
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

export interface CalendarOrganizer {
  userId: string;
  name: string;
  email: string | null;
  displayName: string;
  blocked: boolean;
  /** Their active membership of the project: a member, a visitor, or none. */
  member: 'member' | 'visitor' | null;
  brandStaff: boolean;
}

export interface SiteServiceDeps {
  repo: SiteRepository;
  /** BOOKING_ENV of this service; apps are bound to it. */
  env: string;
  secretBox: SecretBox;
  /** Service time, for new ids and timestamps. */
  clock: Clock;
  /** Why a webhook URL may not be registered (the SSRF guard; never connects), or null. */
  checkUrl?: (url: string) => Promise<string | null>;
  /** PUBLIC_BASE_URL of the service (read on each use), for the payment and calendar webhook URLs. */
  publicBaseUrl: () => string;
}

export class SiteService {
  private readonly applied: (() => void)[] = [];
  private readonly repo: SiteRepository;

  constructor(private readonly deps: SiteServiceDeps) {
    this.repo = deps.repo;
  }

  /** Every project, floor, room and desk as the operator console shows them. */
  async overview(): Promise<ConsoleSite> {
    const o = await this.repo.overview();
    return {
      projects: o.projects.map((p) => ({ _id: p.id, key: p.key, name: p.name, timezone: p.timezone, currency: p.currency })),
      floors: o.floors.map((f) => ({
        _id: f.id,
        key: f.key,
        name: f.name,
        projectId: f.project_id,
        zoneId: f.zone_id,
        zoneName: f.zone_name,
        planImageUrl: null,
      })),
      rooms: o.rooms.map((r) => ({
        _id: r.id,
        key: r.key,
        name: r.name,
        floorId: r.floor_id,
        projectId: r.project_id,
        capacity: r.capacity,
        status: r.status,
        isPublic: r.is_public,
        polygon: r.polygon && r.polygon.length ? r.polygon : null,
      })),
      desks: o.desks.map((d) => ({
        _id: d.id,
        key: d.key,
        name: d.name,
        floorId: d.floor_id,
        projectId: d.project_id,
        index: d.desk_index,
        status: d.status,
      })),
      users: [...groupBy(o.members, (m) => m.id).values()].map((rows) => ({
        _id: rows[0]!.id,
        name: rows[0]!.name,
        email: rows[0]!.email,
        projectIds: rows.map((r) => r.project_id),
      })),
      paymentProviders: o.paymentProviders.map((p) => ({
        _id: p.id,
        key: p.key,
        projectId: p.project_id,
        provider: p.provider as 'stripe' | 'opn',
        methods: p.methods as ('promptpay' | 'card')[],
        apiBaseUrl: p.api_base_url,
        hasSecretKey: p.has_secret_key,
        hasWebhookSecret: p.has_webhook_secret,
        webhookUrl: `${this.deps.publicBaseUrl()}/payments/webhooks/${encodeURIComponent(p.id)}`,
      })),
      calendarConnections: o.calendarConnections.map((c) => ({
        _id: c.id,
        key: c.key,
        projectId: c.project_id,
        provider: c.provider as 'microsoft' | 'google',
        tenantId: c.tenant_id,
        clientId: c.client_id,
        serviceAccountEmail: c.service_account_email,
        subject: c.subject,
        hasSecret: c.has_secret,
        apiBaseUrl: c.api_base_url,
        tokenUrl: c.token_url,
        webhookUrl: `${this.deps.publicBaseUrl()}/calendar/webhooks/${encodeURIComponent(c.id)}`,
      })),
    };
  }

  /** Upserts every entity of `doc` by key, all or nothing (see applySite). */
  async apply(doc: SiteDocument): Promise<ApplyResult> {
    const { env, secretBox, clock, checkUrl } = this.deps;
    const result = await applySite(this.repo, doc, { env, secretBox, now: clock.now(), checkUrl });
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

  /**
   * The user an email names, as an organizer in one project: their names, whether
   * an administrator blocked them from booking, their membership there (active or
   * not, member or visitor) and whether they are staff of the project's brand.
   */
  async organizerByEmail(projectId: string, brandId: string, email: string): Promise<CalendarOrganizer | undefined> {
    const found = await this.repo.organizerByEmail(projectId, email);
    if (!found) return undefined;
    const { user, membership } = found;
    return {
      userId: user.id,
      name: user.name,
      email: user.email,
      displayName: user.profile_name || user.name,
      blocked: user.blocked_from_booking,
      member: membership?.status === 'active' ? (membership.user_type === 'visitor' ? 'visitor' : 'member') : null,
      brandStaff: user.brand_staff.includes(brandId),
    };
  }

  /** The accounts these emails belong to, by lower-cased email (guests without one are left out). */
  async accountsByEmail(emails: string[]): Promise<Map<string, { id: string; name: string }>> {
    const rows = await this.repo.usersByEmails(emails);
    return new Map(rows.filter((r) => r.email).map((r) => [r.email!.toLowerCase(), { id: r.id, name: r.name }]));
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
