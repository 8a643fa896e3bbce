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
import { deliveryHeaders, openDeliveryAuth, type DeliveryAuth } from './signing.js';
import { currentTraceParent } from '../../platform/observability/tracing.js';

export const DELIVERY_JOB = 'webhook-delivery';
export const MAX_ATTEMPTS = 5;
export const FIRST_RETRY_MS = 60_000;
export const DISABLE_AFTER_EXHAUSTED = 20;
export const DELIVERY_TIMEOUT_MS = 10_000;
export const PER_LISTENER_CONCURRENCY = 4;
/** A lease outlasts the attempt's timeout by this much. */
const LEASE_MARGIN_MS = 20_000;

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
  /** Attempts this worker holds, per listener: leased by its due read and not yet over. */
  const held = new Map<string, number>();
  /** Leased by the last due read and not yet claimed by the runner. */
  let unstarted = new Map<string, DeliveryItem>();
  /** Attempts over (room made) so far, and that count when the last due read ran in this turn of the event loop. */
  let freed = 0;
  let readThisTurn: number | null = null;
  const hold = (d: DeliveryItem, n: 1 | -1) => {
    const left = (held.get(d.webhook_id) ?? 0) + n;
    if (left > 0) held.set(d.webhook_id, left);
    else held.delete(d.webhook_id);
    if (n < 0) freed++;
  };
  // The runner frees the attempt's slot a few microtasks after our last line for it, and then
  // reads again. Should a read of another pass fall in between, it leases one row more than the
  // runner starts for that listener: that row is given back at the next read.
  const over = (d: DeliveryItem) => hold(d, -1);
  const delivered = successRecorder(repo, deps.clock);
  return {
    name: DELIVERY_JOB,
    intervalMs: deps.intervalMs ?? 250,
    concurrency: Infinity,
    perKey: { key: (d) => d.webhook_id, limit: PER_LISTENER_CONCURRENCY },
    id: (d) => d.id,
    dueAt: (d) => d.next_attempt_at,
    traceParent: (d) => d.trace_parent,
    // The due read leases what it returns, at most the room each listener's budget has left; the
    // runner starts all of it. What it leaves unstarted (it was stopping, or an item failed to be
    // recorded this pass) is given back at the next read.
    due: async ({ now, realNow, fullKeys }) => {
      if (unstarted.size) {
        const left = [...unstarted.values()];
        unstarted = new Map();
        for (const d of left) hold(d, -1);
        await repo.release(left, left[0]!.leaseUntil!);
      }
      // While attempts are in flight, a read right after another one in the same turn of the event
      // loop, with no attempt over in between, would find nothing the first did not (the runner reads
      // again after every start). When nothing is in flight (a drain, a quiet poll) it always reads.
      if (held.size > 0 && readThisTurn === freed) return [];
      if (readThisTurn === null) setImmediate(() => (readThisTurn = null));
      readThisTurn = freed;
      const room: Record<string, number> = {};
      for (const [webhookId, n] of held) room[webhookId] = Math.max(0, PER_LISTENER_CONCURRENCY - n);
      for (const webhookId of fullKeys) room[webhookId] = 0;
      const items = await repo.claimDue({ now, realNow, leaseMs, budget: PER_LISTENER_CONCURRENCY, room });
      for (const d of items) {
        d.leaseUntil = realNow + leaseMs;
        unstarted.set(d.id, d);
        hold(d, 1);
      }
      return items;
    },
    page: { size: 50, max: 8 },
    backlog: ({ now }) => repo.backlog(now),
    claim: (d, { realNow, leaseMs: ms }) => {
      unstarted.delete(d.id);
      return repo.lease(d, realNow, ms);
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
        if (!failed) over(d);
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
        } finally {
          over(d);
        }
      },
    },
  };
}

/**
 * Records delivered attempts together: those that end in the same turn of the event
 * loop are written by one statement just after it (each attempt waits for its own
 * record, so nothing counts as delivered before it is written). Their listeners'
 * next attempts, started as the records complete, are leased together too.
 */
function successRecorder(repo: DeliveryRepository, clock: Clock) {
  let batch: { d: DeliveryItem; status: number }[] = [];
  let written: Promise<void> | null = null;
  return (d: DeliveryItem, status: number): Promise<void> => {
    batch.push({ d, status });
    written ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      const done = batch;
      batch = [];
      written = null;
      return repo.recordSuccesses(done, clock.now());
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
