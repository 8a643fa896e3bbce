/** Declarative, idempotent site configuration: check the whole document first, then write it all in one transaction. */
import { hashPassword, verifyPassword, type SecretBox } from '../../platform/crypto/secrets.js';
import { errors } from '../../platform/errors.js';
import type { SiteDocument } from '../../contract/site-document.js';
import type { ApplyResult } from '../../contract/ops.js';
import { loadStoredSite } from './site-context.js';
import { planSite, type SitePlan } from './site-plan.js';
import { pacer } from './pace.js';
import { canonicalJson, writePlan, type PreparedSecrets } from './site-writes.js';
import type { SiteRepository } from './site-repository.js';

export interface ApplyOptions {
  /** BOOKING_ENV of this service; apps are bound to it. */
  env: string;
  secretBox: SecretBox;
  /** Service time, for new ids and timestamps. */
  now: number;
  /** Why a webhook URL may not be registered (the SSRF guard; never connects), or null. */
  checkUrl?: (url: string) => Promise<string | null>;
}

// Applies run one at a time in this process, so two concurrent documents cannot
// both decide to insert the same key.
let queue: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(task: () => Promise<T>): Promise<T> {
  const run = queue.then(task, task);
  queue = run.catch(() => undefined);
  return run;
}

/**
 * Upserts every entity of `doc` by key. Fails with KS001 (one message per
 * problem, nothing written) when a reference or key is bad. Deletes only
 * calendar connections, and only when the document has that section (its whole list).
 */
export function applySite(repo: SiteRepository, doc: SiteDocument, opts: ApplyOptions): Promise<ApplyResult> {
  const tooLarge = oversizedSections(doc);
  if (tooLarge.length > 0) return Promise.reject(errors.validation(tooLarge));
  return oneAtATime(async () => {
    const stored = await loadStoredSite(repo, doc, opts.env);
    const { plan, problems } = await planSite(doc, stored, opts.now, opts.env);
    problems.push(...(await webhookUrlProblems(doc, opts.checkUrl)));
    if (problems.length > 0) throw errors.validation(problems);
    const secrets = await prepareSecrets(plan, opts.secretBox);
    try {
      await repo.transaction((trx) => writePlan(repo, plan, secrets, opts, trx));
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw errors.conflict('A concurrent change collided with this document; nothing was applied, apply it again');
      }
      throw err;
    }
    return { ids: plan.ids, idsByKind: plan.idsByKind };
  });
}

/** One message per webhook whose URL the guard refuses, naming its key and the reason. */
async function webhookUrlProblems(doc: SiteDocument, checkUrl: ApplyOptions['checkUrl']): Promise<string[]> {
  if (!checkUrl || !doc.webhooks?.length) return [];
  const reasons = await Promise.all(doc.webhooks.map((w) => checkUrl(w.url)));
  return doc.webhooks.flatMap((w, i) => (reasons[i] ? [`webhooks[${w.key}].url ${reasons[i]}`] : []));
}

/**
 * Most entries one document may hold in each section (devices counted over all
 * access groups). A large real site (thousands of rooms and desks, tens of
 * thousands of users) fits; bigger configurations are applied in several
 * documents, since entities are upserted by key and references may name
 * entities applied earlier. Apps are few and each costs a password hash.
 */
export const MAX_ENTRIES_PER_SECTION = 25_000;
export const MAX_APPS = 1_000;

function oversizedSections(doc: SiteDocument): string[] {
  const counts: [string, number, number][] = [
    ['brands', doc.brands?.length ?? 0, MAX_ENTRIES_PER_SECTION],
    ['projects', doc.projects?.length ?? 0, MAX_ENTRIES_PER_SECTION],
    ['zones', doc.zones?.length ?? 0, MAX_ENTRIES_PER_SECTION],
    ['floors', doc.floors?.length ?? 0, MAX_ENTRIES_PER_SECTION],
    ['rooms', doc.rooms?.length ?? 0, MAX_ENTRIES_PER_SECTION],
    ['desks', doc.desks?.length ?? 0, MAX_ENTRIES_PER_SECTION],
    ['users', doc.users?.length ?? 0, MAX_ENTRIES_PER_SECTION],
    ['accessGroups', doc.accessGroups?.length ?? 0, MAX_ENTRIES_PER_SECTION],
    ['accessGroups[].devices', (doc.accessGroups ?? []).reduce((n, g) => n + (g.devices?.length ?? 0), 0), MAX_ENTRIES_PER_SECTION],
    ['apps', doc.apps?.length ?? 0, MAX_APPS],
    ['webhooks', doc.webhooks?.length ?? 0, MAX_ENTRIES_PER_SECTION],
    ['promoCodes', doc.promoCodes?.length ?? 0, MAX_ENTRIES_PER_SECTION],
    ['paymentProviders', doc.paymentProviders?.length ?? 0, MAX_ENTRIES_PER_SECTION],
    ['calendarConnections', doc.calendarConnections?.length ?? 0, MAX_ENTRIES_PER_SECTION],
  ];
  return counts
    .filter(([, n, max]) => n > max)
    .map(([section, n, max]) => `${section} holds ${n} entries; one document may hold at most ${max} (apply the rest in another document)`);
}

/** The stored secret column when it already holds this value, else a fresh hash or sealed box. */
async function prepareSecrets(plan: SitePlan, box: SecretBox): Promise<PreparedSecrets> {
  const out: PreparedSecrets = {
    appSecretHash: new Map(),
    webhookSecretEnc: new Map(),
    webhookAuthEnc: new Map(),
    providerSecretKeyEnc: new Map(),
    providerWebhookSecretEnc: new Map(),
    calendarSecretEnc: new Map(),
    deviceSecretEnc: new Map(),
  };
  const pace = pacer();
  for (const a of plan.apps) {
    await pace();
    const keep = a.stored !== undefined && (await verifyPassword(a.doc.appSecret, a.stored.secret_hash));
    out.appSecretHash.set(a.id, keep ? a.stored!.secret_hash : await hashPassword(a.doc.appSecret));
  }
  const sealUnlessSame = (plain: string, sealed: string | undefined) =>
    sealed !== undefined && openOrNull(box, sealed) === plain ? sealed : box.seal(plain);
  for (const w of plan.webhooks) {
    await pace();
    const auth = w.doc.auth ?? { scheme: 'signature-only' };
    out.webhookSecretEnc.set(w.id, sealUnlessSame(w.doc.secret, w.stored?.secret_enc));
    out.webhookAuthEnc.set(w.id, sealUnlessSame(canonicalJson(auth), w.stored?.auth_enc));
  }
  for (const p of plan.paymentProviders) {
    await pace();
    out.providerSecretKeyEnc.set(p.id, sealUnlessSame(p.doc.secretKey, p.stored?.secret_key_enc));
    out.providerWebhookSecretEnc.set(p.id, sealUnlessSame(p.doc.webhookSecret, p.stored?.webhook_secret_enc));
  }
  for (const c of plan.calendarConnections) {
    await pace();
    // The planner made sure the provider's own secret is given.
    const secret = c.doc.provider === 'microsoft' ? c.doc.clientSecret! : c.doc.privateKey!;
    out.calendarSecretEnc.set(c.id, sealUnlessSame(secret, c.stored?.secret_enc));
  }
  for (const g of plan.accessGroups) {
    for (const d of g.devices) {
      const t = d.doc.transport;
      const secret = t?.kind === 'isapi' ? t.password : t?.commKey;
      if (secret === undefined) continue;
      await pace();
      out.deviceSecretEnc.set(d.id, sealUnlessSame(secret, d.stored?.transport_secret_enc ?? undefined));
    }
  }
  return out;
}

function openOrNull(box: SecretBox, sealed: string): string | null {
  try {
    return box.open(sealed);
  } catch {
    return null; // sealed under another key: re-seal
  }
}

function isUniqueViolation(err: unknown): boolean {
  const code = String((err as { code?: unknown })?.code ?? '');
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
