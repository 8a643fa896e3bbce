/**
 * The hosted web payment page (`payment.webPaymentUrl`): server-rendered HTML, no
 * framework, every value escaped. Mobile first, two columns on a desktop (the
 * second one is a QR code of the page, to carry on on a phone). English and Thai.
 *
 * With a real provider (Stripe, Opn) the page shows the provider's PromptPay QR
 * (drawn by the service from the payload, or the provider's image as a data: URL;
 * never hot-linked) instead of the sandbox's Pay button.
 *
 * The only script (nonce'd, inline) runs the countdown, which starts from
 * `expiresAt - now` as the service saw it (so it follows the sandbox clock), and
 * polls `GET /pay/{token}/status` every 2 s: paid goes to the redirect, and the
 * other ends (and the countdown's zero) swap in their message without a reload.
 * The page loads nothing else and calls only its own origin; see `pageHeaders`.
 */
import { randomBytes } from 'node:crypto';
import { DateTime } from 'luxon';
import type { PaymentPageView } from './payment-service.js';

export type PageLang = 'en' | 'th';

/** The Pay button's accessible name, in every language (the operator contract names it). */
export const PAY_BUTTON_NAME = 'Pay';

const LOCALES: Record<PageLang, string> = { en: 'en-GB', th: 'th-TH' };

const TEXT = {
  en: {
    docTitle: 'Pay for your booking',
    heading: 'Pay for your booking',
    room: 'Meeting room',
    desk: 'Desk',
    floor: 'Floor',
    booking: 'Booking',
    date: 'Date',
    time: 'Time',
    starts: 'Starts',
    ends: 'Ends',
    invoice: 'Invoice',
    amountDue: 'Amount due',
    amountPaid: 'Amount',
    subtotal: 'Subtotal',
    discount: 'Discount',
    total: 'Total',
    timeLeft: 'Time left to pay',
    pay: 'Pay',
    paying: 'Paying…',
    sandbox: 'Sandbox payment: no real money is charged.',
    scan: 'Scan to pay on your phone',
    continue: 'Continue',
    switchTo: 'ภาษาไทย',
    settledTitle: 'Payment complete',
    settledBody: 'Thank you. Your booking is confirmed.',
    expiredTitle: 'Time to pay has run out',
    expiredBody: 'This payment can no longer be made and the booking has been released. Please book again.',
    voidedTitle: 'Payment cancelled',
    voidedBody: 'This booking was cancelled or changed, so nothing is due on this payment.',
    refundedTitle: 'Payment received after the booking lapsed',
    refundedBody:
      'The time to pay ran out and the booking was released before this payment arrived. The payment will be refunded to you; the booking is not confirmed. Please book again.',
    unavailableTitle: 'Online payment is not available',
    unavailableBody: 'This service has no payment provider set up for online payment. Please contact the property to pay.',
    notFoundTitle: 'Payment not found',
    notFoundBody: 'This payment link is not valid. Please open the link from your booking again.',
    errorTitle: 'Something went wrong',
    errorBody: 'The payment page is not available right now. Please try again in a moment.',
    promptpayTitle: 'Pay with PromptPay',
    promptpayAlt: 'PromptPay QR code',
    promptpayStep1: 'Open your banking app and choose Scan or Scan QR.',
    promptpayStep2: 'Scan this code and check the amount, then confirm.',
    promptpayStep3: 'Keep this page open: it moves on by itself once the payment arrives.',
    promptpaySamePhone: 'Paying on this phone? Save a screenshot of the code and open it from your banking app’s scan screen.',
    waiting: 'Waiting for your payment…',
  },
  th: {
    docTitle: 'ชำระเงินค่าการจอง',
    heading: 'ชำระเงินค่าการจอง',
    room: 'ห้องประชุม',
    desk: 'โต๊ะทำงาน',
    floor: 'ชั้น',
    booking: 'การจอง',
    date: 'วันที่',
    time: 'เวลา',
    starts: 'เริ่ม',
    ends: 'สิ้นสุด',
    invoice: 'เลขที่ใบแจ้งหนี้',
    amountDue: 'ยอดที่ต้องชำระ',
    amountPaid: 'ยอดเงิน',
    subtotal: 'ยอดรวม',
    discount: 'ส่วนลด',
    total: 'ยอดสุทธิ',
    timeLeft: 'เหลือเวลาชำระเงิน',
    pay: 'ชำระเงิน',
    paying: 'กำลังชำระเงิน…',
    sandbox: 'การชำระเงินทดสอบ: ไม่มีการเรียกเก็บเงินจริง',
    scan: 'สแกนเพื่อชำระเงินบนโทรศัพท์',
    continue: 'ดำเนินการต่อ',
    switchTo: 'English',
    settledTitle: 'ชำระเงินเรียบร้อยแล้ว',
    settledBody: 'ขอบคุณ การจองของคุณได้รับการยืนยันแล้ว',
    expiredTitle: 'หมดเวลาชำระเงินแล้ว',
    expiredBody: 'ไม่สามารถชำระเงินรายการนี้ได้อีก และการจองถูกยกเลิกแล้ว กรุณาจองใหม่อีกครั้ง',
    voidedTitle: 'รายการชำระเงินถูกยกเลิก',
    voidedBody: 'การจองนี้ถูกยกเลิกหรือเปลี่ยนแปลงแล้ว จึงไม่ต้องชำระเงินรายการนี้',
    refundedTitle: 'ได้รับการชำระเงินหลังการจองหมดเวลาแล้ว',
    refundedBody: 'หมดเวลาชำระเงินและการจองถูกยกเลิกก่อนได้รับการชำระเงินนี้ เงินจะถูกคืนให้คุณ การจองไม่ได้รับการยืนยัน กรุณาจองใหม่อีกครั้ง',
    unavailableTitle: 'ยังไม่เปิดให้ชำระเงินออนไลน์',
    unavailableBody: 'ระบบนี้ยังไม่ได้ตั้งค่าผู้ให้บริการชำระเงินออนไลน์ กรุณาติดต่ออาคารเพื่อชำระเงิน',
    notFoundTitle: 'ไม่พบรายการชำระเงิน',
    notFoundBody: 'ลิงก์ชำระเงินนี้ไม่ถูกต้อง กรุณาเปิดลิงก์จากการจองของคุณอีกครั้ง',
    errorTitle: 'เกิดข้อผิดพลาด',
    errorBody: 'หน้าชำระเงินไม่พร้อมใช้งานในขณะนี้ กรุณาลองใหม่อีกครั้งในภายหลัง',
    promptpayTitle: 'ชำระเงินด้วยพร้อมเพย์',
    promptpayAlt: 'คิวอาร์โค้ดพร้อมเพย์',
    promptpayStep1: 'เปิดแอปธนาคารของคุณ แล้วเลือก “สแกน” หรือ “สแกน QR”',
    promptpayStep2: 'สแกนโค้ดนี้ ตรวจสอบยอดเงิน แล้วกดยืนยัน',
    promptpayStep3: 'เปิดหน้านี้ค้างไว้ หน้านี้จะไปต่อเองเมื่อได้รับการชำระเงินแล้ว',
    promptpaySamePhone: 'ชำระเงินบนโทรศัพท์เครื่องนี้? บันทึกภาพหน้าจอโค้ดนี้ แล้วเปิดจากหน้าสแกนในแอปธนาคาร',
    waiting: 'กำลังรอการชำระเงินของคุณ…',
  },
} satisfies Record<PageLang, Record<string, string>>;

type Texts = (typeof TEXT)['en'];

// ---------------------------------------------------------------------------
// Language, headers, links
// ---------------------------------------------------------------------------

/** `?lang=th|en` wins; otherwise Thai when the browser prefers Thai over English; otherwise English. */
export function pageLanguage(langParam: unknown, acceptLanguage: string | undefined): PageLang {
  const param: unknown = Array.isArray(langParam) ? langParam[0] : langParam;
  if (param === 'th' || param === 'en') return param;
  if (!acceptLanguage) return 'en';
  const ranked = acceptLanguage
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const weight = q ? Number(q.slice(2)) : 1;
      return { primary: tag.trim().toLowerCase().split('-')[0], q: Number.isFinite(weight) ? weight : 0, i };
    })
    .filter((x) => x.q > 0 && (x.primary === 'th' || x.primary === 'en'))
    .sort((a, b) => b.q - a.q || a.i - b.i);
  return ranked[0]?.primary === 'th' ? 'th' : 'en';
}

/** A fresh nonce for the page's inline style and script. */
export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

/**
 * Headers of every page response. The policy lets the page run only its own
 * nonce'd style and script, load nothing from anywhere, submit its form only to
 * itself (and follow that form's redirect to `formTargets`, the booking's
 * frontendRedirectUrl origin), and never be framed. The token in the URL never
 * leaves in a Referer. `scriptOrigin` (a provider's card script, from the
 * payment's display) is then the one other origin allowed to script, frame and
 * be called.
 */
export function pageHeaders(nonce: string, formTargets: readonly string[] = [], scriptOrigin?: string): Record<string, string> {
  // A card method needs the provider's script (and its frames and calls): that one origin, nothing else.
  const card = scriptOrigin ? ` ${scriptOrigin}` : '';
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'${card}`,
    "img-src 'self' data:",
    `connect-src 'self'${card}`,
    ...(scriptOrigin ? [`frame-src ${scriptOrigin}`] : []),
    `form-action ${["'self'", ...formTargets].join(' ')}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'x-robots-tag': 'noindex, nofollow',
    vary: 'Accept-Language',
  };
}

/** The page's own path (the form posts here, and the POST comes back here). */
export function pagePath(token: string, lang: PageLang): string {
  return `/pay/${encodeURIComponent(token)}?lang=${lang}`;
}

/** The JSON status the page polls (`GET /pay/{token}/status`). */
export function statusPath(token: string): string {
  return `/pay/${encodeURIComponent(token)}/status`;
}

/** An http(s) URL's parsed form, or undefined (a redirect never goes anywhere else). */
function httpUrl(text: string | null): URL | undefined {
  if (!text) return undefined;
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** Where the payer goes after paying: the booking's frontendRedirectUrl with `meetingId` and `status` in its query. */
export function redirectTarget(redirectUrl: string | null, meetingId: string, status: 'paid' | 'refunded'): string | undefined {
  const url = httpUrl(redirectUrl);
  if (!url) return undefined;
  url.searchParams.set('meetingId', meetingId);
  url.searchParams.set('status', status);
  return url.toString();
}

/** The origin the form's redirect may lead to (for the page's form-action policy). */
export function redirectOrigin(redirectUrl: string | null): string | undefined {
  return httpUrl(redirectUrl)?.origin;
}

// ---------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** HTML-escapes text for element content and quoted attribute values. */
export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

export function formatAmount(amount: number, currency: string, lang: PageLang): string {
  try {
    return new Intl.NumberFormat(LOCALES[lang], { style: 'currency', currency }).format(amount);
  } catch {
    return `${currency} ${amount.toFixed(2)}`;
  }
}

function currencyName(currency: string, lang: PageLang): string {
  try {
    return new Intl.DisplayNames([LOCALES[lang]], { type: 'currency' }).of(currency) ?? currency;
  } catch {
    return currency;
  }
}

/** `mm:ss` of a duration, rounded up to the second (00:00 only once it is over). */
export function countdownText(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(total / 60);
  const s = total % 60;
  return `${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
}

/**
 * Property-local date and time rows: `Date` and `Time` (`10:00–11:00 (GMT+7)`)
 * for a booking within one day, `Starts` and `Ends` (date and time each) otherwise.
 */
export function localWhen(view: Pick<PaymentPageView, 'start' | 'end' | 'timeZone'>, lang: PageLang): [string, string][] {
  const t = TEXT[lang];
  const start = DateTime.fromMillis(view.start, { zone: view.timeZone }).setLocale(LOCALES[lang]);
  const end = DateTime.fromMillis(view.end, { zone: view.timeZone }).setLocale(LOCALES[lang]);
  const day = { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' } as const;
  const zone = start.toFormat('ZZZZ');
  if (start.hasSame(end, 'day')) {
    return [
      [t.date, start.toLocaleString(day)],
      [t.time, `${start.toFormat('HH:mm')}–${end.toFormat('HH:mm')} (${zone})`],
    ];
  }
  return [
    [t.starts, `${start.toLocaleString(day)}, ${start.toFormat('HH:mm')}`],
    [t.ends, `${end.toLocaleString(day)}, ${end.toFormat('HH:mm')} (${zone})`],
  ];
}

/** A provider's PromptPay QR: an SVG the service drew from the payload, or the provider's own image as stored. */
export type PromptPayQr = { svg: string } | { image: { contentType: string; base64: string } };

export interface PaymentPageOptions {
  lang: PageLang;
  nonce: string;
  token: string;
  /** An inline SVG QR code of the page URL (shown on wide screens), already safe markup from the QR encoder. */
  qrSvg?: string;
  /** Show the sandbox note (no money moves). */
  sandbox: boolean;
  /** Whether the Pay button may settle here (the sandbox provider only in development and uat). Default true. */
  canPay?: boolean;
  /** A real provider's PromptPay QR: shown as the thing to do, instead of the Pay button. */
  promptpay?: PromptPayQr;
}

type EndState = Exclude<PaymentPageView['state'], 'payable'>;

const STATE_TEXT: Record<EndState | 'unavailable', { title: keyof Texts; body: keyof Texts; icon: string }> = {
  settled: { title: 'settledTitle', body: 'settledBody', icon: '✓' },
  expired: { title: 'expiredTitle', body: 'expiredBody', icon: '!' },
  voided: { title: 'voidedTitle', body: 'voidedBody', icon: '✕' },
  refunded: { title: 'refundedTitle', body: 'refundedBody', icon: '↺' },
  unavailable: { title: 'unavailableTitle', body: 'unavailableBody', icon: '!' },
};

function stateBlock(state: keyof typeof STATE_TEXT, t: Texts, attrs = '', extra = ''): string {
  const s = STATE_TEXT[state];
  return `<section class="state state-${state}" data-state="${state}" role="status"${attrs}>
      <span class="state-icon" aria-hidden="true">${s.icon}</span>
      <h2>${esc(t[s.title])}</h2>
      <p>${esc(t[s.body])}</p>${extra}
    </section>`;
}

/** The end states the script swaps in without a reload (the same texts the server renders), hidden until then. */
function hiddenStates(t: Texts): string {
  return (['expired', 'settled', 'voided', 'refunded'] as const).map((s) => stateBlock(s, t, ` id="${s}" hidden`)).join('\n    ');
}

function promptpayBlock(qr: PromptPayQr, t: Texts): string {
  const code =
    'svg' in qr
      ? `<div class="pp-code" role="img" aria-label="${esc(t.promptpayAlt)}">${qr.svg}</div>`
      : `<div class="pp-code"><img src="data:${esc(qr.image.contentType)};base64,${esc(qr.image.base64)}" alt="${esc(t.promptpayAlt)}"></div>`;
  return `<section class="promptpay" id="promptpay" aria-labelledby="pp-title">
      <h2 id="pp-title">${esc(t.promptpayTitle)}</h2>
      ${code}
      <ol class="steps">
        <li>${esc(t.promptpayStep1)}</li>
        <li>${esc(t.promptpayStep2)}</li>
        <li>${esc(t.promptpayStep3)}</li>
      </ol>
      <p class="note">${esc(t.promptpaySamePhone)}</p>
      <p class="waiting" id="waiting" role="status" aria-live="polite"><span class="spinner" aria-hidden="true"></span>${esc(t.waiting)}</p>
    </section>`;
}

/** What the payer can do: pay (the sandbox's button or a provider's QR), or read why not. */
function actionHtml(view: PaymentPageView, o: PaymentPageOptions, t: Texts, payable: boolean): string {
  if (view.state !== 'payable') {
    const next = view.state === 'settled' ? redirectTarget(view.redirectUrl, view.meetingId, 'paid') : undefined;
    const link = next ? `\n      <a class="button-link" href="${esc(next)}">${esc(t.continue)}</a>` : '';
    return stateBlock(view.state, t, '', link);
  }
  if (!payable) return stateBlock('unavailable', t);
  const remaining = Math.max(0, view.expiresAt - view.now);
  const timer = `<section class="timer" id="timer">
      <span class="timer-label">${esc(t.timeLeft)}</span>
      <span class="countdown" id="countdown" role="timer" data-remaining-ms="${remaining}">${countdownText(remaining)}</span>
    </section>`;
  const todo = o.promptpay
    ? promptpayBlock(o.promptpay, t)
    : `<form method="post" action="${esc(pagePath(o.token, o.lang))}" id="pay-form" class="pay-form">
      <button type="submit" id="pay-button" aria-label="${PAY_BUTTON_NAME}" data-paying="${esc(t.paying)}">${esc(t.pay)}</button>
      ${o.sandbox ? `<p class="note">${esc(t.sandbox)}</p>` : ''}
    </form>`;
  return `${timer}
    ${todo}
    ${hiddenStates(t)}`;
}

function dueHtml(view: PaymentPageView, lang: PageLang, t: Texts, payable: boolean): string {
  const amount = formatAmount(view.amount, view.currency, lang);
  const discounts = view.summary.discounts ?? [];
  const breakdown = discounts.length
    ? `<dl class="breakdown">
          <div><dt>${esc(t.subtotal)}</dt><dd>${esc(formatAmount(view.summary.subtotal, view.currency, lang))}</dd></div>
          ${discounts.map((d) => `<div><dt>${esc(t.discount)} · ${esc(d.name || d.code)}</dt><dd>−${esc(formatAmount(d.value, view.currency, lang))}</dd></div>`).join('\n          ')}
          <div class="sum"><dt>${esc(t.total)}</dt><dd>${esc(amount)}</dd></div>
        </dl>`
    : '';
  return `<section class="due">
      <p class="due-label" id="due-label" data-after="${esc(t.amountPaid)}">${esc(payable ? t.amountDue : t.amountPaid)}</p>
      <p class="amount" id="amount">${esc(amount)}</p>
      <p class="currency">${esc(view.currency)} · ${esc(currencyName(view.currency, lang))}</p>
      ${breakdown}
    </section>`;
}

/**
 * The page of one payment, in its current state. A payable page polls its JSON
 * status (`data-status`) and moves on without a reload. With a provider's
 * PromptPay QR, the amount, countdown and QR come first and the booking after.
 */
export function renderPaymentPage(view: PaymentPageView, o: PaymentPageOptions): string {
  const t = TEXT[o.lang];
  const other: PageLang = o.lang === 'en' ? 'th' : 'en';
  const when = localWhen(view, o.lang);
  const kind = view.assetKind === 'room' ? t.room : t.desk;
  const payable = view.state === 'payable' && (o.promptpay !== undefined || o.canPay !== false);
  const what = `<section class="what">
      <p class="kind">${esc(kind)} · ${esc(t.floor)} ${esc(view.floorName)}</p>
      <h1>${esc(view.assetName)}</h1>
      <p class="booking-title"><span class="visually-hidden">${esc(t.booking)}: </span>${esc(view.title)}</p>
      <dl class="facts">
        ${when.map(([label, value]) => `<div><dt>${esc(label)}</dt><dd>${esc(value)}</dd></div>`).join('\n        ')}
        <div><dt>${esc(t.invoice)}</dt><dd>${esc(view.invoiceNo)}</dd></div>
      </dl>
    </section>`;
  const due = dueHtml(view, o.lang, t, payable);
  const action = actionHtml(view, o, t, payable);
  const sections = payable && o.promptpay ? [due, action, what] : [what, due, action];

  const qr =
    payable && o.qrSvg && !o.promptpay
      ? `<aside class="qr" aria-label="${esc(t.scan)}">
    <div class="qr-code">${o.qrSvg}</div>
    <p>${esc(t.scan)}</p>
  </aside>`
      : '';
  const classes = ['layout', ...(qr ? ['with-qr'] : []), ...(payable && o.promptpay ? ['with-promptpay'] : [])].join(' ');
  const status = payable ? ` data-status="${esc(statusPath(o.token))}"` : '';

  const body = `<div class="${classes}"${status}>
  <main class="card">
    <header class="top">
      <p class="eyebrow">${esc(t.heading)}</p>
      <a class="lang" href="${esc(pagePath(o.token, other))}" lang="${other}" hreflang="${other}">${esc(t.switchTo)}</a>
    </header>
    ${sections.join('\n    ')}
  </main>
  ${qr}
</div>`;
  return documentHtml(o.lang, `${t.docTitle} · ${view.invoiceNo}`, o.nonce, body, payable);
}

/** A page without a payment: an unknown or forged link, or a failure. */
export function renderMessagePage(kind: 'not-found' | 'error', lang: PageLang, nonce: string): string {
  const t = TEXT[lang];
  const [title, text] = kind === 'not-found' ? [t.notFoundTitle, t.notFoundBody] : [t.errorTitle, t.errorBody];
  const body = `<div class="layout">
  <main class="card">
    <section class="state state-${kind}" role="status">
      <span class="state-icon" aria-hidden="true">${kind === 'not-found' ? '?' : '!'}</span>
      <h1>${esc(title)}</h1>
      <p>${esc(text)}</p>
    </section>
  </main>
</div>`;
  return documentHtml(lang, title, nonce, body, false);
}

function documentHtml(lang: PageLang, title: string, nonce: string, body: string, withScript: boolean): string {
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light">
<link rel="icon" href="data:,">
<title>${esc(title)}</title>
<style nonce="${esc(nonce)}">${STYLE}</style>
</head>
<body>
${body}
${withScript ? `<script nonce="${esc(nonce)}">${SCRIPT}</script>` : ''}
</body>
</html>
`;
}

const STYLE = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;min-height:100vh;background:#eef1f6;color:#1b2330;
  font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans Thai","Sukhumvit Set",Sarabun,Loma,Garuda,"Helvetica Neue",Arial,sans-serif}
html:lang(th) body{line-height:1.65}
.layout{max-width:460px;margin:0 auto;padding:16px}
.card{background:#fff;border-radius:16px;box-shadow:0 1px 2px rgba(16,24,40,.06),0 8px 24px rgba(16,24,40,.08);padding:20px}
.top{display:flex;justify-content:space-between;align-items:center;gap:12px;margin-bottom:12px}
.eyebrow{margin:0;font-size:.8rem;font-weight:600;letter-spacing:.04em;text-transform:uppercase;color:#5b6576}
html:lang(th) .eyebrow{letter-spacing:0;font-size:.85rem}
.lang{font-size:.9rem;color:#1d4ed8;text-decoration:none;border:1px solid #c7d2fe;border-radius:999px;padding:4px 12px;white-space:nowrap}
.lang:focus-visible,.lang:hover{background:#eef2ff}
.kind{margin:0;color:#5b6576;font-size:.95rem}
h1{margin:2px 0 4px;font-size:1.6rem;line-height:1.25}
.booking-title{margin:0 0 12px;color:#1b2330;font-weight:500;overflow-wrap:anywhere}
.facts{margin:0;display:grid;gap:6px;padding:12px 0;border-top:1px solid #e6e9ef;border-bottom:1px solid #e6e9ef}
.facts div,.breakdown div{display:flex;justify-content:space-between;gap:16px}
dt{color:#5b6576}
.facts dt{white-space:nowrap;flex-shrink:0}
dd{margin:0;text-align:right;font-weight:500;font-variant-numeric:tabular-nums}
.due{padding:16px 0 8px;text-align:center}
.due-label{margin:0;color:#5b6576;font-size:.95rem}
.amount{margin:2px 0 0;font-size:2.4rem;font-weight:700;letter-spacing:-.01em;font-variant-numeric:tabular-nums;line-height:1.2}
.currency{margin:2px 0 0;color:#5b6576;font-size:.85rem}
.breakdown{margin:12px 0 0;display:grid;gap:4px;font-size:.95rem;text-align:left}
.breakdown .sum{border-top:1px solid #e6e9ef;padding-top:4px;font-weight:600}
.timer{display:flex;justify-content:space-between;align-items:center;gap:12px;margin:8px 0 16px;padding:10px 14px;border-radius:12px;background:#fff7e6;color:#7a4a00}
.countdown{font-size:1.4rem;font-weight:700;font-variant-numeric:tabular-nums}
.pay-form{margin:0}
.pay-form button{display:block;width:100%;min-height:52px;border:0;border-radius:12px;background:#15803d;color:#fff;font:inherit;font-size:1.15rem;font-weight:700;cursor:pointer}
.pay-form button:hover{background:#166534}
.pay-form button:focus-visible{outline:3px solid #86efac;outline-offset:2px}
.pay-form button:disabled{background:#6b7280;cursor:progress}
.note{margin:10px 0 0;text-align:center;color:#5b6576;font-size:.85rem}
.state{margin-top:8px;padding:16px;border-radius:12px;text-align:center;background:#f3f4f6}
.state h1,.state h2{margin:6px 0 4px;font-size:1.25rem}
.state p{margin:0;color:#374151}
.state-icon{display:inline-flex;align-items:center;justify-content:center;width:44px;height:44px;border-radius:50%;font-size:1.4rem;font-weight:700;background:#e5e7eb;color:#374151}
.state-settled{background:#ecfdf3}.state-settled .state-icon{background:#15803d;color:#fff}
.state-expired,.state-error{background:#fef3f2}.state-expired .state-icon,.state-error .state-icon{background:#b42318;color:#fff}
.state-refunded{background:#fffaeb}.state-refunded .state-icon{background:#b54708;color:#fff}
.button-link{display:block;margin-top:14px;padding:12px;border-radius:12px;background:#1d4ed8;color:#fff;text-decoration:none;font-weight:600}
.qr{display:none}
.promptpay{margin:0 0 16px;text-align:center}
.promptpay h2{margin:0 0 10px;font-size:1.15rem}
.pp-code{display:block;width:min(100%,264px);margin:0 auto;padding:12px;background:#fff;border:1px solid #e6e9ef;border-radius:12px}
.pp-code svg,.pp-code img{display:block;width:100%;height:auto;image-rendering:pixelated}
.steps{margin:14px 0 0;padding-left:1.4em;text-align:left;display:grid;gap:4px}
.promptpay .note{text-align:left}
.waiting{display:flex;align-items:center;justify-content:center;gap:10px;margin:14px 0 0;padding:10px 14px;border-radius:12px;background:#eff6ff;color:#1e3a8a;font-weight:600}
.spinner{flex-shrink:0;width:16px;height:16px;border-radius:50%;border:2px solid #93c5fd;border-top-color:#1d4ed8;animation:spin 1s linear infinite}
@keyframes spin{to{transform:rotate(360deg)}}
@media (prefers-reduced-motion:reduce){.spinner{animation:none}}
.with-promptpay .what{border-top:1px solid #e6e9ef;padding-top:12px}
[hidden]{display:none!important}
.visually-hidden{position:absolute!important;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (min-width:760px){
  .layout{padding:48px 24px}
  .layout.with-qr{max-width:760px;display:grid;grid-template-columns:minmax(0,1fr) 220px;gap:24px;align-items:start}
  .card{padding:28px}
  .qr{display:block;background:#fff;border-radius:16px;padding:16px;text-align:center;box-shadow:0 1px 2px rgba(16,24,40,.06),0 8px 24px rgba(16,24,40,.08)}
  .qr-code svg{display:block;width:100%;height:auto}
  .qr p{margin:8px 0 0;color:#5b6576;font-size:.9rem}
}
`;

// The countdown, from the remaining time the service computed, against this device's clock; and
// the payment's status, polled every 2 s until it ends: paid goes to the redirect, any other end
// swaps in its message. Both stop at the first end (the countdown's zero included).
const SCRIPT = `
(function () {
  var el = document.getElementById('countdown');
  if (!el) return;
  var end = Date.now() + Number(el.getAttribute('data-remaining-ms'));
  var root = document.querySelector('[data-status]');
  var statusUrl = root ? root.getAttribute('data-status') : null;
  var timer, poll, done = false;
  function fmt(ms) {
    var s = Math.max(0, Math.ceil(ms / 1000)), m = Math.floor(s / 60);
    s = s % 60;
    return (m < 10 ? '0' : '') + m + ':' + (s < 10 ? '0' : '') + s;
  }
  function stop() {
    done = true;
    clearTimeout(timer);
    clearTimeout(poll);
  }
  function show(state) {
    if (done) return;
    stop();
    ['pay-form', 'timer', 'promptpay'].forEach(function (id) {
      var node = document.getElementById(id);
      if (node) node.remove();
    });
    var qr = document.querySelector('.qr');
    if (qr) qr.remove();
    var layout = document.querySelector('.layout');
    if (layout) layout.classList.remove('with-qr', 'with-promptpay');
    var label = document.getElementById('due-label');
    if (label) label.textContent = label.getAttribute('data-after');
    var msg = document.getElementById(state);
    if (msg) msg.hidden = false;
  }
  function expire() { show('expired'); }
  function later() { if (!done) poll = setTimeout(check, 2000); }
  function check() {
    if (done || !statusUrl) return;
    fetch(statusUrl, { cache: 'no-store', credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (r) {
        if (r.status === 404) { stop(); return null; }
        return r.ok ? r.json() : null;
      })
      .then(function (s) {
        if (done) return;
        if (s && s.state === 'settled' && s.redirectUrl) { stop(); location.assign(s.redirectUrl); return; }
        if (s && s.state !== 'payable' && document.getElementById(s.state)) { show(s.state); return; }
        later();
      }, later);
  }
  function tick() {
    if (done) return;
    var left = end - Date.now();
    el.textContent = fmt(left);
    if (left <= 0) { expire(); return; }
    timer = setTimeout(tick, Math.min(1000, (left % 1000) || 1000));
  }
  document.addEventListener('visibilitychange', function () { if (done) return; clearTimeout(timer); tick(); });
  var form = document.getElementById('pay-form');
  if (form) form.addEventListener('submit', function () {
    var b = document.getElementById('pay-button');
    if (!b) return;
    setTimeout(function () { b.disabled = true; b.textContent = b.getAttribute('data-paying'); }, 0);
  });
  window.addEventListener('pageshow', function (e) { if (e.persisted) location.reload(); });
  tick();
  later();
})();
`;
