/** Declarative, idempotent site configuration: check the whole document first, then write it all in one transaction. */
import { hashPassword, verifyPassword, type SecretBox } from '../../platform/crypto/secrets.js';
import { errors } from '../../platform/errors.js';
import type { SiteDocument } from '../../contract/site-document.js';
import type { ApplyResult } from '../../contract/ops.js';
import { loadStoredSite } from './site-context.js';
import { planSite } from './site-plan.js';
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
 * problem, nothing written) when a reference or key is bad. Never deletes.
 */
export function applySite(repo: SiteRepository, doc: SiteDocument, opts: ApplyOptions): Promise<ApplyResult> {
  return oneAtATime(async () => {
    const stored = await loadStoredSite(repo, doc, opts.env);
    const { plan, problems } = planSite(doc, stored, opts.now);
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

/** The stored secret column when it already holds this value, else a fresh hash or sealed box. */
async function prepareSecrets(plan: ReturnType<typeof planSite>['plan'], box: SecretBox): Promise<PreparedSecrets> {
  const out: PreparedSecrets = { appSecretHash: new Map(), webhookSecretEnc: new Map(), webhookAuthEnc: new Map() };
  for (const a of plan.apps) {
    const keep = a.stored !== undefined && (await verifyPassword(a.doc.appSecret, a.stored.secret_hash));
    out.appSecretHash.set(a.id, keep ? a.stored!.secret_hash : await hashPassword(a.doc.appSecret));
  }
  const sealUnlessSame = (plain: string, sealed: string | undefined) => (sealed !== undefined && openOrNull(box, sealed) === plain ? sealed : box.seal(plain));
  for (const w of plan.webhooks) {
    const auth = w.doc.auth ?? { scheme: 'signature-only' };
    out.webhookSecretEnc.set(w.id, sealUnlessSame(w.doc.secret, w.stored?.secret_enc));
    out.webhookAuthEnc.set(w.id, sealUnlessSame(canonicalJson(auth), w.stored?.auth_enc));
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
