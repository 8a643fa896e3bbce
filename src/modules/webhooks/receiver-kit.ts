/**
 * For receivers: verify a delivery from this service (see docs/webhooks.md).
 * Checks the timestamp (about 5 minutes of tolerance), then the HMAC signature
 * over the raw body bytes in constant time, then de-duplicates on the delivery id.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const TIMESTAMP_TOLERANCE_MS = 5 * 60_000;

export type VerifyResult = { ok: true; duplicate: boolean } | { ok: false; reason: 'missing-headers' | 'stale-timestamp' | 'bad-signature' };

export interface Verifier {
  verify(headers: Record<string, string | string[] | undefined>, rawBody: Buffer | string, nowMs?: number): VerifyResult;
}

export function createVerifier(secret: string, seen: Set<string> = new Set()): Verifier {
  return {
    verify(headers, rawBody, nowMs = Date.now()) {
      const h = (name: string) => {
        const v = headers[name] ?? headers[name.toLowerCase()];
        return Array.isArray(v) ? v[0] : v;
      };
      const timestamp = h('x-service-timestamp');
      const sig = h('x-service-signature');
      const id = h('x-service-delivery');
      if (!timestamp || !sig || !id) return { ok: false, reason: 'missing-headers' };
      if (!/^\d+$/.test(timestamp) || Math.abs(nowMs - Number(timestamp)) > TIMESTAMP_TOLERANCE_MS) return { ok: false, reason: 'stale-timestamp' };
      const body = typeof rawBody === 'string' ? Buffer.from(rawBody) : rawBody;
      const expected = Buffer.from(
        'sha256=' + createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${timestamp}.`), body])).digest('hex'),
      );
      const given = Buffer.from(sig);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad-signature' };
      const duplicate = seen.has(id);
      seen.add(id);
      return { ok: true, duplicate };
    },
  };
}
