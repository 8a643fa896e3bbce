/**
 * An injected fetch for the SDK's unit tests: records every request and answers
 * from a handler (a Response, a thrown error for a network failure).
 */
export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  body: any;
}

export type Handler = (req: SeenRequest, n: number) => Response | Promise<Response>;

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

export const ok = (data: unknown, status = 200, meta?: unknown) =>
  json(status, { code: 'KS000', success: true, message: 'OK', data, ...(meta ? { meta } : {}) });
export const fail = (status: number, code: string, message: string | string[] = 'refused', headers: Record<string, string> = {}) =>
  json(status, { code, success: false, message }, headers);

export function tokenResponse(n: number, o: { expiresIn?: number; refresh?: boolean; refreshExpiresIn?: number } = {}) {
  return json(201, {
    access_token: `kat_${n}`,
    expires_in: o.expiresIn ?? 3600,
    ...(o.refresh === false ? {} : { refresh_token: `krt_${n}`, refresh_token_expires_in: o.refreshExpiresIn ?? 86_400 }),
  });
}

export class FakeApi {
  readonly requests: SeenRequest[] = [];
  private grantsIssued = 0;

  constructor(public handler: Handler) {}

  readonly fetch = async (input: string, init: RequestInit): Promise<Response> => {
    const url = new URL(input);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    const req: SeenRequest = {
      method: init.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
    };
    this.requests.push(req);
    return this.handler(req, this.requests.length);
  };

  /** Requests to `path` (with `method` when given). */
  to(path: string, method?: string): SeenRequest[] {
    return this.requests.filter((r) => r.path === path && (!method || r.method === method));
  }

  /** Token grants seen, by grant_type. */
  grants(type?: string): SeenRequest[] {
    return this.to('/auth/accessToken').filter((r) => !type || r.body.grant_type === type);
  }

  /** Answers a token grant with a fresh numbered pair. */
  issue(o: Parameters<typeof tokenResponse>[1] = {}): Response {
    return tokenResponse(++this.grantsIssued, o);
  }
}

/** A network failure as undici's fetch reports it. */
export function networkFailure(): never {
  throw new TypeError('fetch failed', { cause: new Error('ECONNRESET') });
}
