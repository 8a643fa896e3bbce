/**
 * Response headers every answer carries (one onSend hook, registered first in
 * app.ts so every scope, plugin, error and 404 answer gets it):
 *
 * - `x-content-type-options: nosniff` on every response; `x-powered-by` never.
 * - `cache-control: no-store` on every response that did not choose its own
 *   caching: API answers carry tokens, PINs, card numbers, member data and
 *   secret addresses, and nothing of the API is meant for shared caches. (Room
 *   feeds choose `private, max-age=60`; Swagger UI's static files their own.)
 * - HTML pages: a strict Content-Security-Policy unless the page set its own
 *   (the payment page sets a nonce-based one), `referrer-policy: no-referrer`,
 *   `x-frame-options: DENY` (and `frame-ancestors 'none'` in every policy).
 *   Pages under a prefix with its own needs get their policy from `pagePolicies`
 *   (/docs: Swagger UI's scripts and styles from 'self'; /console: its bundle
 *   and styles from 'self', nothing inline).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The policy of any HTML page that sets none of its own: nothing may load, submit, or frame it. */
export const DEFAULT_PAGE_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The one <style> element Swagger UI's bundle inserts at start-up, allowed by its
 * hash (no 'unsafe-inline'). An upgrade of @fastify/swagger-ui that changes it
 * shows in test/browser/docs-page.test.ts, whose violation message names the new hash.
 */
export const SWAGGER_UI_STYLE_HASH = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

/**
 * A page whose scripts, styles, images, fonts and API calls all come from this
 * origin: no inline script, no plugins, no framing, no form posts elsewhere.
 * `style` and `font` are the sources those two directives allow.
 */
function sameOriginPageCsp(style: string, font: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "script-src-attr 'none'",
    `style-src ${style}`,
    "img-src 'self' data:",
    `font-src ${font}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "object-src 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Swagger UI (/docs): its bundle, styles and the OpenAPI document from this origin, plus its one inserted style by hash. */
export const DOCS_CSP = sameOriginPageCsp(`'self' ${SWAGGER_UI_STYLE_HASH}`, "'self' data:");

/** The operator console (/console): its bundle, styles and ops API calls all come from this origin; nothing inline. */
export const CONSOLE_CSP = sameOriginPageCsp("'self'", "'self'");

export interface PagePolicy {
  /** Path prefix of the pages (matched on whole segments). */
  prefix: string;
  csp: string;
}

export const PAGE_POLICIES: readonly PagePolicy[] = [
  { prefix: '/docs', csp: DOCS_CSP },
  { prefix: '/console', csp: CONSOLE_CSP },
];

const HTML = /^text\/html\b/i;

/** The onSend hook, synchronous (no promise per answer). */
export function securityHeaders(pagePolicies: readonly PagePolicy[] = PAGE_POLICIES) {
  return (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void): void => {
    reply.removeHeader('x-powered-by');
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    const type = reply.getHeader('content-type');
    if (type !== undefined && HTML.test(String(type))) {
      if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', pageCsp(req.url, pagePolicies));
      if (!reply.hasHeader('referrer-policy')) reply.header('referrer-policy', 'no-referrer');
      if (!reply.hasHeader('x-frame-options')) reply.header('x-frame-options', 'DENY');
    }
    done(null, payload);
  };
}

function pageCsp(url: string, policies: readonly PagePolicy[]): string {
  const path = url.split('?')[0]!;
  for (const p of policies) if (path === p.prefix || path.startsWith(`${p.prefix}/`)) return p.csp;
  return DEFAULT_PAGE_CSP;
}
