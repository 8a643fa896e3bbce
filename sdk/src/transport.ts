/**
 * One HTTP exchange with the API, with the retry policy the specification allows:
 * network failures, 5xx and 429 only, exponential backoff with jitter (at least
 * the answer's Retry-After), at most `maxRetries` (3) retries; never another 4xx.
 * A 401 KS002 makes the token source obtain a new token and the call is sent
 * once more (that one resend is not a retry of the policy).
 */
import { BookingApiError, NetworkError, errorFromAnswer } from './errors.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Supplies bearer tokens; `invalidate` is told about a token the server refused (401 KS002). */
export interface TokenProvider {
  token(): Promise<string>;
  invalidate(token: string): void;
}

export interface TransportOptions {
  baseUrl: string;
  /** Default: the global fetch. */
  fetch?: FetchLike;
  /** Epoch milliseconds. Default Date.now. */
  now?: () => number;
  /** Default: setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** [0, 1). Default Math.random (the jitter). */
  random?: () => number;
  /** Retries after the first attempt (network, 5xx, 429). The specification allows at most 3. */
  maxRetries?: number;
  /** First backoff step; doubles each retry. Default 250 ms. */
  baseDelayMs?: number;
  /** Largest backoff step. Default 8 s. */
  maxDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the error is thrown. Default 60 s. */
  maxRetryAfterMs?: number;
  /** Per attempt; an attempt that takes longer is aborted and counts as a network failure. Default 30 s. */
  timeoutMs?: number;
  /** Extra headers on every request (e.g. a user agent). */
  headers?: Record<string, string>;
}

export type QueryValue = string | number | boolean | null | undefined | readonly (string | number | boolean)[];

export interface CallOptions {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: object;
  body?: unknown;
  /** The bearer token source; null for the token endpoint and the probes. */
  auth: TokenProvider | null;
  /**
   * Which failures may be retried. `all` (default): network, 5xx and 429.
   * `unprocessed`: only answers that say the request was not acted on (429, 503 KS234);
   * for a create that must be reconciled, not resent blindly.
   */
  retry?: 'all' | 'unprocessed';
}

export interface Answer {
  status: number;
  headers: Headers;
  /** Parsed JSON body (undefined when empty). */
  body: unknown;
}

/** The `data` and `meta` of an enveloped answer (every JSON answer but the token endpoint's), typed by the caller. */
export function enveloped<T, M = unknown>(a: Answer): { data: T; meta: M } {
  return (a.body ?? {}) as { data: T; meta: M };
}

/** The largest retry count the specification allows. */
export const MAX_RETRIES = 3;

export class Transport {
  readonly baseUrl: string;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  private readonly fetchFn: FetchLike;
  private readonly random: () => number;
  private readonly maxRetries: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly timeoutMs: number;
  private readonly headers: Record<string, string>;

  constructor(o: TransportOptions) {
    this.baseUrl = o.baseUrl.replace(/\/+$/, '');
    this.fetchFn = o.fetch ?? ((input, init) => fetch(input, init));
    this.now = o.now ?? Date.now;
    this.sleep = o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.random = o.random ?? Math.random;
    this.maxRetries = Math.min(Math.max(0, o.maxRetries ?? MAX_RETRIES), MAX_RETRIES);
    this.baseDelayMs = o.baseDelayMs ?? 250;
    this.maxDelayMs = o.maxDelayMs ?? 8_000;
    this.maxRetryAfterMs = o.maxRetryAfterMs ?? 60_000;
    this.timeoutMs = o.timeoutMs ?? 30_000;
    this.headers = o.headers ?? {};
  }

  /**
   * Backoff before retry number `retry` (1-based): "equal jitter" over
   * base * 2^(retry-1), capped; never shorter than the answer's Retry-After.
   */
  backoffMs(retry: number, retryAfterMs?: number): number {
    const step = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (retry - 1));
    const jittered = step / 2 + this.random() * (step / 2);
    return Math.max(jittered, retryAfterMs ?? 0);
  }

  /** Sends the call and answers the 2xx answer, or throws a BookingApiError. */
  async call(o: CallOptions): Promise<Answer> {
    const mode = o.retry ?? 'all';
    let resentAfter401 = false;
    let retries = 0;
    let ambiguous = false;
    for (;;) {
      const token = o.auth ? await o.auth.token() : undefined;
      let failure: BookingApiError;
      try {
        const answer = await this.once(o, token);
        if (answer.status >= 200 && answer.status < 300) return answer;
        failure = this.errorOf(o, answer);
      } catch (err) {
        if (!(err instanceof BookingApiError)) throw err;
        failure = err;
      }
      failure.attempts = retries + (resentAfter401 ? 2 : 1);
      failure.afterAmbiguousAttempt = ambiguous;
      // 401 KS002: the token expired or was revoked under us; get a new one and send once more.
      if (o.auth && token && failure.status === 401 && failure.code === 'KS002' && !resentAfter401) {
        o.auth.invalidate(token);
        resentAfter401 = true;
        continue;
      }
      const allowed = mode === 'all' ? failure.retryable : failure.status === 429 || (failure.status === 503 && failure.code === 'KS234');
      if (!allowed || retries >= this.maxRetries) throw failure;
      if (failure.retryAfterMs !== undefined && failure.retryAfterMs > this.maxRetryAfterMs) throw failure;
      retries++;
      if (failure.status === 0 || (failure.status >= 500 && failure.code !== 'KS234')) ambiguous = true;
      await this.sleep(this.backoffMs(retries, failure.retryAfterMs));
    }
  }

  url(path: string, query?: object): string {
    const sp = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {}) as [string, QueryValue][]) {
      if (v === undefined || v === null) continue;
      if (Array.isArray(v)) for (const item of v) sp.append(k, String(item));
      else sp.append(k, String(v));
    }
    const qs = sp.toString();
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`;
  }

  private async once(o: CallOptions, token: string | undefined): Promise<Answer> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.headers };
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] = 'application/json';
    }
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    try {
      let res: Response;
      try {
        res = await this.fetchFn(this.url(o.path, o.query), { method: o.method, headers, body, signal: controller.signal });
      } catch (err) {
        throw this.networkError(o, err, timedOut);
      }
      let text: string;
      try {
        text = await res.text();
      } catch (err) {
        throw this.networkError(o, err, timedOut);
      }
      let parsed: unknown;
      if (text) {
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
      }
      return { status: res.status, headers: res.headers, body: parsed };
    } finally {
      clearTimeout(timer);
    }
  }

  private networkError(o: CallOptions, err: unknown, timedOut: boolean): NetworkError {
    const isAbort = err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
    const reason = err instanceof Error ? (err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message) : String(err);
    return new NetworkError({ method: o.method, path: o.path, timedOut: timedOut || isAbort, reason, cause: err });
  }

  private errorOf(o: CallOptions, a: Answer): BookingApiError {
    const env = a.body && typeof a.body === 'object' ? (a.body as { code?: unknown; message?: unknown; data?: unknown }) : {};
    const code = typeof env.code === 'string' ? env.code : `HTTP_${a.status}`;
    const messages = Array.isArray(env.message) ? env.message.map(String) : typeof env.message === 'string' ? [env.message] : [];
    return errorFromAnswer(
      {
        status: a.status,
        code,
        messages,
        method: o.method,
        path: o.path,
        data: env.data,
        retryAfterMs: retryAfterMs(a.headers.get('retry-after'), this.now()),
      },
      this.now(),
    );
  }
}

/** Retry-After as delay-seconds or an HTTP date, in milliseconds from now. */
export function retryAfterMs(value: string | null, nowMs: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
