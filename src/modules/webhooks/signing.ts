/**
 * How a delivery authenticates itself to the receiver. Pure: builds the headers
 * for a body, a listener secret, its auth scheme and the send time.
 *   X-Service-Signature = "sha256=" + hex(HMAC-SHA256(secret, timestamp + "." + rawBody))   (timestamp in ms)
 * and the Standard Webhooks headers (standardwebhooks.com):
 *   webhook-id        = the delivery id (the same on every retry)
 *   webhook-timestamp = unix seconds of this attempt
 *   webhook-signature = "v1," + base64(HMAC-SHA256(key, id + "." + timestamp + "." + rawBody))
 * where the key is the listener secret's UTF-8 bytes (our secrets are plain text,
 * not `whsec_<base64>`). Both are computed for each attempt, so a retry carries a
 * fresh timestamp and signature.
 * Optional schemes add a static bearer token, custom headers, or an HS256 JWT.
 */
import { createHmac } from 'node:crypto';
import { SignJWT } from 'jose';
import type { SecretBox } from '../../platform/crypto/secrets.js';

/** The `iss` of delivery JWTs. */
export const JWT_ISSUER = 'room-desk-booking-service';
export const JWT_LIFETIME_SECONDS = 60;

export type DeliveryAuth =
  | { scheme: 'signature-only' }
  | { scheme: 'bearer'; token: string }
  | { scheme: 'custom-header'; headers: Record<string, string> }
  | { scheme: 'jwt' };

/** A listener's auth scheme, opened from its sealed column (`webhooks.auth_enc`): the one place that JSON is parsed. */
export function openDeliveryAuth(box: Pick<SecretBox, 'open'>, sealed: string): DeliveryAuth {
  return JSON.parse(box.open(sealed)) as DeliveryAuth;
}

export function signature(secret: string, timestamp: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')}`;
}

/** The Standard Webhooks signature: "v1," + base64 HMAC-SHA256 over "{id}.{timestamp}.{body}", keyed by the secret's UTF-8 bytes. */
export function standardSignature(secret: string, id: string, timestampSeconds: string, rawBody: string): string {
  return `v1,${createHmac('sha256', secret).update(`${id}.${timestampSeconds}.${rawBody}`).digest('base64')}`;
}

export async function deliveryHeaders(p: {
  deliveryId: string;
  type: string;
  projectId: string;
  body: string;
  secret: string;
  auth: DeliveryAuth;
  /** Real wall-clock time (receivers compare it with their own clock). */
  nowMs: number;
}): Promise<Record<string, string>> {
  const timestamp = String(p.nowMs);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-service-event': p.type,
    'x-service-delivery': p.deliveryId,
    'x-service-timestamp': timestamp,
    'x-service-signature': signature(p.secret, timestamp, p.body),
  };
  const seconds = String(Math.floor(p.nowMs / 1000));
  headers['webhook-id'] = p.deliveryId;
  headers['webhook-timestamp'] = seconds;
  headers['webhook-signature'] = standardSignature(p.secret, p.deliveryId, seconds, p.body);
  switch (p.auth.scheme) {
    case 'bearer':
      headers.authorization = `Bearer ${p.auth.token}`;
      break;
    case 'custom-header':
      // Never over the signature headers (apply refuses those names; this guards older stored listeners).
      for (const [name, value] of Object.entries(p.auth.headers)) if (!(name.toLowerCase() in headers)) headers[name.toLowerCase()] = value;
      break;
    case 'jwt': {
      const iat = Math.floor(p.nowMs / 1000);
      const jwt = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(JWT_ISSUER)
        .setAudience(p.projectId)
        .setJti(p.deliveryId)
        .setIssuedAt(iat)
        .setExpirationTime(iat + JWT_LIFETIME_SECONDS)
        .sign(new TextEncoder().encode(p.secret));
      headers.authorization = `Bearer ${jwt}`;
      break;
    }
    case 'signature-only':
      // The signature headers above are the whole proof.
      break;
  }
  return headers;
}
