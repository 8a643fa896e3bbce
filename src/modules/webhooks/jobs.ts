/**
 * Webhook delivery as a job of the runner: POST of the stored body with the
 * signed headers, a 10-second timeout, up to 5 attempts with exponential backoff
 * from 1 minute (on the service clock, so the sandbox clock moves retries too),
 * and a listener disabled after 20 consecutive exhausted deliveries.
 *
 * Each listener has its own small concurrency budget, so a slow or dead receiver
 * never holds up the others, and sending never blocks the API. Attempts are
 * leased (real time) so several instances never send the same attempt twice.
 *
 * SQL per attempt: two statements. The due read leases, in one statement, what can
 * start now (every listener's first due rows, as many as its budget has room for)
 * and reads those rows' bodies and their listeners' addresses and secrets; it
 * walks the pending-deliveries index and reads no other row. The outcome is one
 * statement (a success that ends a run of failures also resets the listener's
 * count; a delivery that used up its attempts counts against its listener in the
 * same transaction). Requests go over kept-alive connections (delivery-client.ts).
 */
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { JobHandler } from '../../platform/jobs/handler.js';
import type { ClaimedDelivery, DeliveryItem, DeliveryRepository } from './delivery-repository.js';
import type { UrlGuard } from '../../platform/net/url-guard.js';
import { DeliveryClient, TransportError } from './delivery-client.js';
import { DeliveryLeases } from './delivery-leases.js';
import { deliveryHeaders, openDeliveryAuth, type DeliveryAuth } from './signing.js';
import { currentTraceParent } from '../../platform/observability/tracing.js';

export const DELIVERY_JOB = 'webhook-delivery';
export const MAX_ATTEMPTS = 5;
export const FIRST_RETRY_MS = 60_000;
export const DISABLE_AFTER_EXHAUSTED = 20;
export const DELIVERY_TIMEOUT_MS = 10_000;
export const PER_LISTENER_CONCURRENCY = 4;
/** Deliveries per listener one worker leases at most: in flight, and leased ahead to start as slots free up. */
export const LEASE_DEPTH = 2 * PER_LISTENER_CONCURRENCY;
/** A lease outlasts the attempt's timeout by this much. */
const LEASE_MARGIN_MS = 20_000;
/** A lease leased ahead is renewed before its attempt starts when less than the timeout and this much is left. */
const RENEW_MARGIN_MS = 5_000;

/** When attempt number `attemptsMade` failed, the next try is due after this long (1, 2, 4, 8 minutes). */
export function retryDelayMs(attemptsMade: number): number {
  return FIRST_RETRY_MS * 2 ** (attemptsMade - 1);
}

export interface DeliveryJobDeps {
  repo: DeliveryRepository;
  /** Service time: schedules retries. */
  clock: Clock;
  /** Real time: signature timestamps and JWT expiry. */
  realClock: Clock;
  secretBox: SecretBox;
  timeoutMs?: number;
  intervalMs?: number;
  /** The HTTP client (default: one of its own, with the timeout and the URL guard). */
  client?: DeliveryClient;
  /** The SSRF guard of listener addresses (production: https and public addresses only). */
  urlGuard?: UrlGuard;
}

/** The receiver refused the attempt (or could not be reached): recorded as a failed attempt. */
export class DeliveryFailed extends Error {
  constructor(readonly outcome: { status: number | null; error: string }) {
    super(outcome.error);
  }
}

export function deliveryJob(deps: DeliveryJobDeps): JobHandler<DeliveryItem> {
  const { repo } = deps;
  const timeoutMs = deps.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const leaseMs = timeoutMs + LEASE_MARGIN_MS;
  const client = deps.client ?? new DeliveryClient(timeoutMs, undefined, deps.urlGuard);
  const credentials = listenerCredentials(deps.secretBox);
  const leases = new DeliveryLeases(PER_LISTENER_CONCURRENCY, LEASE_DEPTH);
  /** Leased ahead and to be given back at the next due read (their listener used up a delivery: it may be disabled now). */
  let giveBack: DeliveryItem[] = [];
  /** `leases.freed` when the last due read ran in this turn of the event loop. */
  let readThisTurn: number | null = null;
  const delivered = successRecorder(repo, deps, leases, leaseMs);
  return {
    name: DELIVERY_JOB,
    intervalMs: deps.intervalMs ?? 250,
    concurrency: Infinity,
    perKey: { key: (d) => d.webhook_id, limit: PER_LISTENER_CONCURRENCY },
    id: (d) => d.id,
    dueAt: (d) => d.next_attempt_at,
    traceParent: (d) => d.trace_parent,
    // What was leased ahead starts first, from memory. Only when none of it can start does the due
    // read run: it leases, with their bodies, what may start now and as many more per listener as
    // LEASE_DEPTH allows, and what the runner does not start stays leased ahead.
    due: async ({ now, realNow }) => {
      if (giveBack.length) {
        const back = giveBack;
        giveBack = [];
        // Each read's leases end at their own time: given back by it.
        const byLease = new Map<number, DeliveryItem[]>();
        for (const d of back) (byLease.get(d.leaseUntil!) ?? byLease.set(d.leaseUntil!, []).get(d.leaseUntil!)!).push(d);
        for (const [until, items] of byLease) await repo.release(items, until);
      }
      const ready = leases.startable();
      if (ready.length) return ready;
      // While attempts are in flight, a read right after another one in the same turn of the event
      // loop, with no attempt over in between, would find nothing the first did not (the runner reads
      // again after every start). When nothing is in flight (a drain, a quiet poll) it always reads.
      if (leases.busy && readThisTurn === leases.freed) return [];
      if (readThisTurn === null) setImmediate(() => (readThisTurn = null));
      readThisTurn = leases.freed;
      const items = await repo.claimDue({ now, realNow, leaseMs, budget: LEASE_DEPTH, room: leases.room() });
      leases.add(items, realNow + leaseMs);
      return leases.startable();
    },
    page: { size: 50, max: 8 },
    backlog: ({ now }) => repo.backlog(now),
    // Leased ahead: started as it is, unless its lease would run out during the attempt (then renewed first).
    claim: async (d, { realNow, leaseMs: ms }) => {
      const ahead = leases.start(d);
      if (ahead && d.leaseUntil! - realNow >= timeoutMs + RENEW_MARGIN_MS) return repo.lease(d, realNow, ms); // no statement: leased and read
      d.claimed = undefined;
      let ok = false;
      try {
        ok = await repo.lease(d, realNow, ms);
      } finally {
        if (ok && !ahead) leases.adopt(d);
        if (!ok && ahead) leases.over(d);
      }
      if (ok) d.leaseUntil = realNow + ms;
      return ok;
    },
    leaseMs,
    run: async (d) => {
      let failed = true;
      try {
        const status = await attempt(deps, client, credentials, d);
        await delivered(d, status);
        failed = false;
      } finally {
        // A failed attempt is over once the runner has recorded it (below).
        if (!failed) leases.over(d);
      }
    },
    retry: {
      maxAttempts: MAX_ATTEMPTS,
      delayMs: retryDelayMs,
      attempts: (d) => d.attempts,
      record: async (d, err, { retryAt, now }) => {
        try {
          // Anything else (e.g. the database) leaves the lease to expire, and the attempt is made again.
          if (!(err instanceof DeliveryFailed)) throw err;
          await repo.recordFailure(d, err.outcome, now, retryAt, DISABLE_AFTER_EXHAUSTED);
          // Used up: the listener may be disabled now; what is leased ahead for it goes back (a due read leases it again if not).
          if (retryAt === null) giveBack.push(...leases.drop(d.webhook_id));
        } finally {
          leases.over(d);
        }
      },
    },
  };
}

/**
 * Records delivered attempts together: those that end in the same turn of the event
 * loop are written by one statement just after it (each attempt waits for its own
 * record, so nothing counts as delivered before it is written). On PostgreSQL that
 * statement is also the next due read: it leases what may start next (kept ahead),
 * so in a steady flow a delivery costs one round trip.
 */
function successRecorder(repo: DeliveryRepository, deps: DeliveryJobDeps, leases: DeliveryLeases, leaseMs: number) {
  let batch: { d: DeliveryItem; status: number }[] = [];
  let written: Promise<void> | null = null;
  return (d: DeliveryItem, status: number): Promise<void> => {
    batch.push({ d, status });
    written ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      const done = batch;
      batch = [];
      written = null;
      const realNow = deps.realClock.now();
      const room = leases.room(done.map((x) => x.d));
      const next = { now: deps.clock.now(), realNow, leaseMs, budget: LEASE_DEPTH, room };
      leases.add(await repo.recordSuccesses(done, next.now, next), realNow + leaseMs);
    });
    return written;
  };
}

/** A listener's secret and auth scheme, opened once per sealed value (the same sealed text always opens to the same). */
function listenerCredentials(box: SecretBox) {
  const opened = new Map<string, { secret: string; auth: DeliveryAuth }>();
  return (c: ClaimedDelivery) => {
    const key = `${c.secret_enc}\n${c.auth_enc}`;
    let v = opened.get(key);
    if (!v) {
      v = { secret: box.open(c.secret_enc), auth: openDeliveryAuth(box, c.auth_enc) };
      if (opened.size >= 1000) opened.clear();
      opened.set(key, v);
    }
    return v;
  };
}

/** Sends one attempt; resolves with the 2xx status, or throws DeliveryFailed. */
async function attempt(
  deps: DeliveryJobDeps,
  client: DeliveryClient,
  credentials: ReturnType<typeof listenerCredentials>,
  d: DeliveryItem,
): Promise<number> {
  const c = d.claimed;
  if (!c) throw new Error(`delivery ${d.id} was not leased`);
  const { secret, auth } = credentials(c);
  const headers = await deliveryHeaders({
    deliveryId: d.id,
    type: c.type,
    projectId: c.project_id,
    body: c.body,
    secret,
    auth,
    nowMs: deps.realClock.now(),
  });
  // Tracing on: the receiver may continue the trace (the attempt's job span as parent).
  const traceParent = currentTraceParent();
  if (traceParent) headers.traceparent = traceParent;
  let status: number;
  try {
    status = await client.post(c.url, headers, c.body);
  } catch (err) {
    if (err instanceof TransportError) throw new DeliveryFailed({ status: null, error: err.message });
    throw new DeliveryFailed({ status: null, error: `connection error: ${(err as Error)?.message ?? err}` });
  }
  // Redirects are not followed: a 3xx is a refusal like any other non-2xx.
  if (status < 200 || status >= 300) throw new DeliveryFailed({ status, error: `HTTP ${status}` });
  return status;
}
