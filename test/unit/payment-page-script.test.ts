/**
 * The payment page's inline script against a stub DOM and fake timers (the
 * browser test runs it in Chromium where one is installed): it polls the status
 * every 2 s, goes to the redirect when paid, swaps in the message of any other
 * end, and stops polling at the first end, the countdown's zero included.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderPaymentPage } from '../../src/modules/payments/payment-page.js';
import type { PaymentPageView } from '../../src/modules/payments/payment-service.js';

const NOW = Date.UTC(2026, 10, 26, 3, 0);
const view: PaymentPageView = {
  state: 'payable',
  paymentId: 'p1',
  invoiceNo: 'INV-1',
  amount: 250,
  summary: { subtotal: 250, total: 250, discounts: [] },
  currency: 'THB',
  expiresAt: NOW + 60_000,
  now: NOW,
  meetingId: 'm1',
  title: 'Review',
  assetKind: 'room',
  assetName: 'Lotus Room',
  floorName: '12F',
  timeZone: 'Asia/Bangkok',
  start: NOW + 3_600_000,
  end: NOW + 7_200_000,
  redirectUrl: null,
  provider: 'stripe',
  display: { promptpay: { payload: '000201' } },
};

function scriptOf(html: string): string {
  return /<script nonce="[^"]+">([\s\S]*?)<\/script>/.exec(html)![1]!;
}

type Answer = { status: number; body?: unknown } | 'network';

function run(answers: Answer[]) {
  const el = (id: string, extra: Record<string, unknown> = {}) => ({ id, hidden: true, removed: false, textContent: '', ...extra });
  const nodes: Record<string, ReturnType<typeof el>> = {
    countdown: el('countdown', { getAttribute: () => '60000' }),
    timer: el('timer'),
    promptpay: el('promptpay'),
    'due-label': el('due-label', { getAttribute: () => 'Amount' }),
    expired: el('expired'),
    settled: el('settled'),
    voided: el('voided'),
    refunded: el('refunded'),
  };
  for (const n of Object.values(nodes)) (n as { remove?: () => void }).remove = () => void (n.removed = true);
  const document = {
    getElementById: (id: string) => (nodes[id] && !nodes[id]!.removed ? nodes[id] : null),
    querySelector: (sel: string) =>
      sel === '[data-status]' ? { getAttribute: () => '/pay/tok/status' } : sel === '.layout' ? { classList: { remove() {} } } : null,
    addEventListener() {},
  };
  const fetch = vi.fn(async () => {
    const a = answers.shift() ?? { status: 200, body: { state: 'payable', redirectUrl: null } };
    if (a === 'network') throw new TypeError('offline');
    return { status: a.status, ok: a.status >= 200 && a.status < 300, json: async () => a.body };
  });
  const location = { assign: vi.fn(), reload: vi.fn() };
  const window = { addEventListener() {} };
  const html = renderPaymentPage(view, { lang: 'en', nonce: 'n', token: 'tok', sandbox: false, promptpay: { svg: '<svg></svg>' } });
  new Function('document', 'window', 'fetch', 'location', scriptOf(html))(document, window, fetch, location);
  return { nodes, fetch, location };
}

describe('payment page script', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(NOW);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('polls every 2 s while payable, then goes to the redirect once paid, and stops', async () => {
    const s = run([
      { status: 200, body: { state: 'payable', redirectUrl: null } },
      'network',
      { status: 503, body: { code: 'KS004', success: false, message: 'The payment cannot be read right now; retry' } },
      { status: 200, body: { state: 'settled', redirectUrl: 'https://app.example/done?status=paid' } },
    ]);
    expect(s.fetch).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(2000);
    expect(s.fetch).toHaveBeenCalledTimes(1);
    expect(s.fetch).toHaveBeenCalledWith('/pay/tok/status', expect.objectContaining({ cache: 'no-store' }));
    await vi.advanceTimersByTimeAsync(6000);
    expect(s.fetch).toHaveBeenCalledTimes(4);
    expect(s.location.assign).toHaveBeenCalledWith('https://app.example/done?status=paid');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(s.fetch).toHaveBeenCalledTimes(4);
  });

  it('paid without a redirect URL swaps in the settled message; voided and refunded show theirs', async () => {
    for (const state of ['settled', 'voided', 'refunded', 'expired'] as const) {
      const s = run([{ status: 200, body: { state, redirectUrl: null } }]);
      await vi.advanceTimersByTimeAsync(2000);
      expect(s.nodes[state]!.hidden, state).toBe(false);
      expect(s.nodes.promptpay!.removed).toBe(true);
      expect(s.nodes.timer!.removed).toBe(true);
      expect(s.nodes['due-label']!.textContent).toBe('Amount');
      expect(s.location.assign).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(10_000);
      expect(s.fetch).toHaveBeenCalledTimes(1);
    }
  });

  it('a 404 (the link no longer resolves) stops polling', async () => {
    const s = run([{ status: 404, body: { code: 'KS005', success: false, message: 'Payment not found' } }]);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(s.fetch).toHaveBeenCalledTimes(1);
  });

  it('at the countdown zero the expired message shows and polling stops', async () => {
    const s = run([]);
    await vi.advanceTimersByTimeAsync(59_000);
    expect(s.nodes.expired!.hidden).toBe(true);
    const calls = s.fetch.mock.calls.length;
    expect(calls).toBeGreaterThanOrEqual(28);
    await vi.advanceTimersByTimeAsync(1500);
    expect(s.nodes.expired!.hidden).toBe(false);
    expect(s.nodes.countdown!.textContent).toBe('00:00');
    const after = s.fetch.mock.calls.length;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(s.fetch.mock.calls.length).toBe(after);
  });
});
