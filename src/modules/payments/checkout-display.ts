/**
 * Reading a payment's stored `provider_display` (JSON of CheckoutDisplay) for
 * the payment page. What comes back is checked field by field: the page draws
 * a QR from the payload, an image only as a `data:` URL of an image type with
 * base64 content, and allows a card script only from an http(s) origin. Anything
 * else is dropped (never a provider URL on the page).
 */
import type { CheckoutDisplay } from './provider.js';

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/svg+xml']);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** An EMVCo payload is printable ASCII; a QR code holds at most a few thousand characters. */
const PAYLOAD = /^[\x20-\x7e]{1,2000}$/;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The origin of an http(s) URL, or undefined. */
export function httpOrigin(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

function promptpayOf(v: unknown): CheckoutDisplay['promptpay'] | undefined {
  if (!isRecord(v)) return undefined;
  const out: NonNullable<CheckoutDisplay['promptpay']> = {};
  if (typeof v.payload === 'string' && PAYLOAD.test(v.payload)) out.payload = v.payload;
  const image = v.image;
  if (isRecord(image) && typeof image.contentType === 'string' && typeof image.base64 === 'string') {
    const contentType = image.contentType.toLowerCase().split(';')[0]!.trim();
    const base64 = image.base64.replace(/\s+/g, '');
    if (IMAGE_TYPES.has(contentType) && BASE64.test(base64)) out.image = { contentType, base64 };
  }
  return out.payload || out.image ? out : undefined;
}

/** The stored display (a JSON string, or already parsed), checked; null when absent or unreadable. */
export function parseCheckoutDisplay(stored: unknown): CheckoutDisplay | null {
  let value: unknown = stored;
  if (typeof stored === 'string') {
    try {
      value = JSON.parse(stored);
    } catch {
      return null;
    }
  }
  if (!isRecord(value)) return null;
  const display: CheckoutDisplay = {};
  const promptpay = promptpayOf(value.promptpay);
  if (promptpay) display.promptpay = promptpay;
  const scriptOrigin = isRecord(value.card) ? httpOrigin(value.card.scriptOrigin) : undefined;
  if (scriptOrigin) display.card = { scriptOrigin };
  return display.promptpay || display.card ? display : null;
}
