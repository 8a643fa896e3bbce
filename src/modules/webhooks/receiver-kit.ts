/**
 * For receivers: verify a delivery from this service (see docs/webhooks.md).
 * Checks the timestamp (about 5 minutes of tolerance), then the HMAC signature
 * over the raw body bytes in constant time, then de-duplicates on the delivery id.
 *
 * Both header sets are verified when present: the service's own `x-service-*`
 * and the Standard Webhooks headers (`webhook-id`, `webhook-timestamp` in
 * seconds, `webhook-signature` "v1,<base64>", possibly several space-separated).
 */
import { createHmac } from 'node:crypto';
import { safeEqual } from '../../platform/crypto/secrets.js';

export const TIMESTAMP_TOLERANCE_MS = 5 * 60_000;

export type VerifyResult =
  { ok: true; duplicate: boolean } | { ok: false; reason: 'missing-headers' | 'stale-timestamp' | 'bad-signature' };

export interface Verifier {
  verify(headers: Record<string, string | string[] | undefined>, rawBody: Buffer | string, nowMs?: number): VerifyResult;
}

type Check = { ok: true; id: string } | { ok: false; reason: 'missing-headers' | 'stale-timestamp' | 'bad-signature' };
type Header = (name: string) => string | undefined;

/** The service's own headers: x-service-timestamp (ms), x-service-signature "sha256=<hex>" over "{timestamp}.{body}". */
function checkServiceHeaders(secret: string, h: Header, body: Buffer, nowMs: number): Check {
  const timestamp = h('x-service-timestamp');
  const sig = h('x-service-signature');
  const id = h('x-service-delivery');
  if (!timestamp || !sig || !id) return { ok: false, reason: 'missing-headers' };
  if (!/^\d+$/.test(timestamp) || Math.abs(nowMs - Number(timestamp)) > TIMESTAMP_TOLERANCE_MS)
    return { ok: false, reason: 'stale-timestamp' };
  const expected =
    'sha256=' +
    createHmac('sha256', secret)
      .update(Buffer.concat([Buffer.from(`${timestamp}.`), body]))
      .digest('hex');
  return safeEqual(sig, expected) ? { ok: true, id } : { ok: false, reason: 'bad-signature' };
}

/** Standard Webhooks: webhook-timestamp (s), webhook-signature "v1,<base64>" (space-separated list) over "{id}.{timestamp}.{body}". */
function checkStandardHeaders(secret: string, h: Header, body: Buffer, nowMs: number): Check {
  const id = h('webhook-id');
  const timestamp = h('webhook-timestamp');
  const sigs = h('webhook-signature');
  if (!id || !timestamp || !sigs) return { ok: false, reason: 'missing-headers' };
  if (!/^\d+$/.test(timestamp) || Math.abs(nowMs - Number(timestamp) * 1000) > TIMESTAMP_TOLERANCE_MS)
    return { ok: false, reason: 'stale-timestamp' };
  const expected =
    'v1,' +
    createHmac('sha256', secret)
      .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]))
      .digest('base64');
  return sigs.split(' ').some((s) => safeEqual(s, expected)) ? { ok: true, id } : { ok: false, reason: 'bad-signature' };
}

/**
 * Verifies every header set a delivery carries: the x-service-* set when any of
 * its headers is present, the Standard Webhooks set when any webhook-* header is;
 * both must hold, and at least one set must be there.
 */
export function createVerifier(secret: string, seen: Set<string> = new Set()): Verifier {
  return {
    verify(headers, rawBody, nowMs = Date.now()) {
      const h: Header = (name) => {
        const v = headers[name] ?? headers[name.toLowerCase()];
        return Array.isArray(v) ? v[0] : v;
      };
      const body = typeof rawBody === 'string' ? Buffer.from(rawBody) : rawBody;
      const checks: Check[] = [];
      if (['x-service-timestamp', 'x-service-signature', 'x-service-delivery'].some((n) => h(n) !== undefined))
        checks.push(checkServiceHeaders(secret, h, body, nowMs));
      if (['webhook-id', 'webhook-timestamp', 'webhook-signature'].some((n) => h(n) !== undefined))
        checks.push(checkStandardHeaders(secret, h, body, nowMs));
      if (checks.length === 0) return { ok: false, reason: 'missing-headers' };
      for (const c of checks) if (!c.ok) return c;
      const id = (checks[0] as { id: string }).id;
      const duplicate = seen.has(id);
      seen.add(id);
      return { ok: true, duplicate };
    },
  };
}
