/**
 * Token sources.
 *  - AppTokens: the app_credentials grant, refreshed with rotation (the newest
 *    pair is always kept; every caller waiting for a token shares the one
 *    refresh in flight); expiry computed from `expires_in`, refreshed a little
 *    early; a refresh that fails (401, or KS234/no answer after the retries)
 *    falls back to the app_credentials grant.
 *  - ActAsTokens: a delegated token for one member (no refresh token); obtained
 *    again with act_as when it expires.
 * 503 KS234 on the token endpoint is retried by the transport with backoff and
 * the tokens held are kept.
 */
import type { TokenRequest, TokenResponse, SubjectType } from './types.js';
import type { TokenProvider, Transport } from './transport.js';
import { BookingApiError } from './errors.js';

export interface AppCredentials {
  appId: string;
  appSecret: string;
}

/** A token pair with absolute expiry instants (epoch ms, client clock). */
export interface StoredTokens {
  accessToken: string;
  accessExpiresAt: number;
  refreshToken?: string;
  refreshExpiresAt?: number;
}

/** Refresh this long before expiry: a tenth of the lifetime, at most 60 s. */
export function earlyMs(lifetimeSeconds: number): number {
  return Math.min(60_000, lifetimeSeconds * 100);
}

export function storedFrom(res: TokenResponse, nowMs: number): StoredTokens {
  return {
    accessToken: res.access_token,
    accessExpiresAt: nowMs + res.expires_in * 1000 - earlyMs(res.expires_in),
    ...(res.refresh_token
      ? {
          refreshToken: res.refresh_token,
          refreshExpiresAt:
            res.refresh_token_expires_in !== undefined
              ? nowMs + res.refresh_token_expires_in * 1000 - earlyMs(res.refresh_token_expires_in)
              : undefined,
        }
      : {}),
  };
}

/** POST /auth/accessToken (not enveloped; 201). */
export async function requestToken(transport: Transport, body: TokenRequest): Promise<TokenResponse> {
  const answer = await transport.call({ method: 'POST', path: '/auth/accessToken', body, auth: null });
  return answer.body as TokenResponse;
}

abstract class SharedTokenSource implements TokenProvider {
  protected current: StoredTokens | undefined;
  private inFlight: Promise<StoredTokens> | undefined;

  constructor(protected readonly transport: Transport) {}

  async token(): Promise<string> {
    const c = this.current;
    if (c && this.transport.now() < c.accessExpiresAt) return c.accessToken;
    return (await this.renew()).accessToken;
  }

  /** Obtains a new access token now (concurrent callers share one request). */
  renew(): Promise<StoredTokens> {
    if (!this.inFlight) {
      this.inFlight = this.obtain().then(
        (t) => {
          this.inFlight = undefined;
          this.current = t;
          this.stored(t);
          return t;
        },
        (err) => {
          this.inFlight = undefined;
          throw err;
        },
      );
    }
    return this.inFlight;
  }

  invalidate(token: string): void {
    if (this.current?.accessToken === token) this.current = { ...this.current, accessExpiresAt: 0 };
  }

  /** The tokens held now (to persist them). */
  get tokens(): StoredTokens | undefined {
    return this.current ? { ...this.current } : undefined;
  }

  /** Forgets every token held (after a revoke). */
  clear(): void {
    this.current = undefined;
  }

  protected abstract obtain(): Promise<StoredTokens>;
  protected stored(_t: StoredTokens): void {}
}

export interface AppTokensOptions {
  /** Tokens persisted earlier (e.g. by onTokens), so a restart does not need a new grant. */
  initial?: StoredTokens;
  /** Told about every new pair, to persist the newest one (the old refresh token is spent). */
  onTokens?: (t: StoredTokens) => void;
}

export class AppTokens extends SharedTokenSource {
  /** Grants made, by kind (for diagnostics and tests). */
  readonly grants = { app_credentials: 0, refresh_token: 0 };

  constructor(
    transport: Transport,
    private readonly credentials: AppCredentials,
    private readonly options: AppTokensOptions = {},
  ) {
    super(transport);
    this.current = options.initial;
  }

  protected async obtain(): Promise<StoredTokens> {
    const held = this.current;
    const now = this.transport.now();
    if (held?.refreshToken && (held.refreshExpiresAt === undefined || now < held.refreshExpiresAt)) {
      try {
        this.grants.refresh_token++;
        const res = await requestToken(this.transport, { grant_type: 'refresh_token', refresh_token: held.refreshToken });
        return storedFrom(res, this.transport.now());
      } catch (err) {
        // 401: the refresh token expired or its family was revoked. 503 KS234 or no answer after the
        // retries: a lost answer may have rotated it already. Either way start again from the app
        // credentials; if that fails too, the tokens held are kept and the error surfaces.
        if (!(err instanceof BookingApiError)) throw err;
      }
    }
    this.grants.app_credentials++;
    const res = await requestToken(this.transport, {
      grant_type: 'app_credentials',
      app_id: this.credentials.appId,
      app_secret: this.credentials.appSecret,
    });
    return storedFrom(res, this.transport.now());
  }

  protected override stored(t: StoredTokens): void {
    this.options.onTokens?.(t);
  }
}

export class ActAsTokens extends SharedTokenSource {
  grants = 0;

  constructor(
    transport: Transport,
    private readonly credentials: AppCredentials,
    readonly subject: string,
    readonly subjectType: SubjectType = 'external_user_id',
  ) {
    super(transport);
  }

  protected async obtain(): Promise<StoredTokens> {
    this.grants++;
    const res = await requestToken(this.transport, {
      grant_type: 'act_as',
      app_id: this.credentials.appId,
      app_secret: this.credentials.appSecret,
      subject: this.subject,
      subject_type: this.subjectType,
    });
    return storedFrom(res, this.transport.now());
  }
}
