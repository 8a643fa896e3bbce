/**
 * For receivers: verify a delivery from this service (see docs/webhooks.md).
 * Checks the timestamp (about 5 minutes of tolerance), then the HMAC signature
 * over the raw body bytes in constant time, then de-duplicates on the delivery id.
 *
 * Either header set is verified: the Standard Webhooks headers (`webhook-id`,
 * `webhook-timestamp` in seconds, `webhook-signature` "v1,<base64>", possibly
 * several space-separated) when present, else the service's own `x-service-*`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const TIMESTAMP_TOLERANCE_MS = 5 * 60_000;

export type VerifyResult = { ok: true; duplicate: boolean } | { ok: false; reason: 'missing-headers' | 'stale-timestamp' | 'bad-signature' };

export interface Verifier {
  verify(headers: Record<string, string | string[] | undefined>, rawBody: Buffer | string, nowMs?: number): VerifyResult;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function createVerifier(secret: string, seen: Set<string> = new Set()): Verifier {
  return {
    verify(headers, rawBody, nowMs = Date.now()) {
      const h = (name: string) => {
        const v = headers[name] ?? headers[name.toLowerCase()];
        return Array.isArray(v) ? v[0] : v;
      };
      const body = typeof rawBody === 'string' ? Buffer.from(rawBody) : rawBody;
      let id: string | undefined;
      if (h('webhook-signature') !== undefined) {
        // Standard Webhooks: timestamp in seconds, signature over "{id}.{timestamp}.{body}".
        id = h('webhook-id');
        const timestamp = h('webhook-timestamp');
        const sigs = h('webhook-signature');
        if (!id || !timestamp || !sigs) return { ok: false, reason: 'missing-headers' };
        if (!/^\d+$/.test(timestamp) || Math.abs(nowMs - Number(timestamp) * 1000) > TIMESTAMP_TOLERANCE_MS) return { ok: false, reason: 'stale-timestamp' };
        const expected = 'v1,' + createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body])).digest('base64');
        if (!sigs.split(' ').some((s) => sameText(s, expected))) return { ok: false, reason: 'bad-signature' };
      } else {
        const timestamp = h('x-service-timestamp');
        const sig = h('x-service-signature');
        id = h('x-service-delivery');
        if (!timestamp || !sig || !id) return { ok: false, reason: 'missing-headers' };
        if (!/^\d+$/.test(timestamp) || Math.abs(nowMs - Number(timestamp)) > TIMESTAMP_TOLERANCE_MS) return { ok: false, reason: 'stale-timestamp' };
        const expected = 'sha256=' + createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${timestamp}.`), body])).digest('hex');
        if (!sameText(sig, expected)) return { ok: false, reason: 'bad-signature' };
      }
      const duplicate = seen.has(id);
      seen.add(id);
      return { ok: true, duplicate };
    },
  };
}
