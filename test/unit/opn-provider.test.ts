/** The Opn Payments adapter against the local Opn stand-in (no database). */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BadSignatureError,
  ProviderRefusedError,
  ProviderUnavailableError,
  type CheckoutRequest,
  type PaymentProvider,
  type ProviderAccount,
} from '../../src/modules/payments/provider.js';
import { OPN_SCRIPT_ORIGIN, OpnClient, opnProvider } from '../../src/modules/payments/providers/opn.js';
import { OPN_STANDIN_QR_SVG, startOpnStandin, type OpnStandin } from '../support/opn-standin.js';
import type { Clock } from '../../src/platform/clock/clock.js';

const SECRET_KEY = `skey_test_${randomBytes(12).toString('hex')}`;
const WEBHOOK_SECRET = randomBytes(32).toString('base64');
const realClock: Clock = { now: () => Date.now() };

let standin: OpnStandin;
let provider: PaymentProvider;

function account(over: Partial<ProviderAccount> = {}): ProviderAccount {
  return {
    id: 'pp_1',
    provider: 'opn',
    secretKey: SECRET_KEY,
    webhookSecret: WEBHOOK_SECRET,
    methods: ['promptpay'],
    apiBaseUrl: standin.url,
    ...over,
  };
}

function checkout(over: Partial<CheckoutRequest> = {}): CheckoutRequest {
  return {
    paymentId: `pay_${randomBytes(6).toString('hex')}`,
    meetingId: 'mtg_1',
    amountMinor: 25_000,
    currency: 'THB',
    description: 'INV-0001',
    methods: ['promptpay'],
    idempotencyKey: 'idem-1',
    expiresAt: Date.now() + 5 * 60_000,
    ...over,
  };
}

function posts(path: string) {
  return standin.requests.filter((r) => r.method === 'POST' && r.path === path);
}

async function errorOf(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

beforeEach(async () => {
  standin = await startOpnStandin({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });
  provider = opnProvider(account(), { realClock, timeoutMs: 2_000 });
});

afterEach(async () => {
  await standin.close();
});

describe('opn adapter: checkout', () => {
  it('creates a promptpay source and a charge in minor units with our ids in the metadata', async () => {
    const req = checkout();
    const result = await provider.createCheckout(req);
    expect(provider.name).toBe('opn');
    const [source] = posts('/sources');
    expect(source!.body).toEqual({ type: 'promptpay', amount: 25_000, currency: 'thb' });
    const [charge] = posts('/charges');
    expect(charge!.body).toMatchObject({
      amount: 25_000,
      currency: 'thb',
      description: 'INV-0001',
      metadata: { paymentId: req.paymentId, meetingId: 'mtg_1' },
    });
    expect((charge!.body as { source: string }).source).toMatch(/^src_test_/);
    expect(result.ref).toMatch(/^chrg_test_/);
    expect(standin.charge(result.ref)?.status).toBe('pending');
    expect(standin.requests.every((r) => r.authorized)).toBe(true);
  });

  it('downloads the QR document with the secret key and returns it as base64', async () => {
    const result = await provider.createCheckout(checkout());
    const download = standin.requests.find((r) => r.path.includes('/downloads/'));
    expect(download?.authorized).toBe(true);
    expect(result.display.promptpay?.image).toEqual({
      contentType: 'image/svg+xml',
      base64: Buffer.from(OPN_STANDIN_QR_SVG).toString('base64'),
    });
    expect(result.display.card).toBeUndefined();
  });

  it('follows a download that redirects to the stored file', async () => {
    standin.redirectDownloads(true);
    const result = await provider.createCheckout(checkout());
    expect(result.display.promptpay?.image?.base64).toBe(Buffer.from(OPN_STANDIN_QR_SVG).toString('base64'));
    const file = standin.requests.find((r) => r.path.startsWith('/files/'));
    expect(file).toBeDefined();
  });

  it('offers the Omise.js origin only when card is among the methods', async () => {
    const result = await provider.createCheckout(checkout({ methods: ['promptpay', 'card'] }));
    expect(result.display.card).toEqual({ scriptOrigin: OPN_SCRIPT_ORIGIN });
    expect(OPN_SCRIPT_ORIGIN).toBe('https://cdn.omise.co');
  });

  it('a retried create finds the charge of its payment instead of charging twice', async () => {
    const req = checkout();
    const first = await provider.createCheckout(req);
    const second = await provider.createCheckout(req);
    expect(second.ref).toBe(first.ref);
    expect(posts('/charges')).toHaveLength(1);
    expect(standin.charges()).toHaveLength(1);
    // Another payment gets its own charge.
    const other = await provider.createCheckout(checkout());
    expect(other.ref).not.toBe(first.ref);
  });

  it('a create whose QR download failed is retried without a second charge', async () => {
    const req = checkout();
    standin.failNext(503, undefined, '/downloads/');
    await expect(provider.createCheckout(req)).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(standin.charges()).toHaveLength(1);
    const again = await provider.createCheckout(req);
    expect(again.ref).toBe(standin.charges()[0]!.id);
    expect(posts('/charges')).toHaveLength(1);
    expect(again.display.promptpay?.image?.contentType).toBe('image/svg+xml');
  });

  it('sends the secret key only to the API origin, never to a document on another host', async () => {
    const other = await startOpnStandin({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });
    try {
      const client = new OpnClient(standin.url, SECRET_KEY, 2_000);
      const err = await errorOf(client.download(`${other.url}/charges/chrg_x/documents/docu_x/downloads/AB`));
      expect(err).toBeInstanceOf(ProviderRefusedError);
      expect(other.requests[0]!.headers.authorization).toBeUndefined();
    } finally {
      await other.close();
    }
  });

  it('refuses a checkout without promptpay (Opn cards need a token step the port has not)', async () => {
    const err = await errorOf(provider.createCheckout(checkout({ methods: ['card'] })));
    expect(err).toBeInstanceOf(ProviderRefusedError);
    expect((err as ProviderRefusedError).code).toBe('unsupported_methods');
    expect(standin.requests).toHaveLength(0);
  });
});

describe('opn adapter: retrieve and void', () => {
  it('maps the charge states', async () => {
    const a = (await provider.createCheckout(checkout())).ref;
    expect(await provider.retrieve(a)).toMatchObject({ ref: a, state: 'pending', amountMinor: 25_000, currency: 'THB' });
    standin.succeed(a);
    const paid = await provider.retrieve(a);
    expect(paid.state).toBe('succeeded');
    expect(paid.paymentId).toBeTruthy();
    const b = (await provider.createCheckout(checkout())).ref;
    standin.fail(b);
    expect((await provider.retrieve(b)).state).toBe('failed');
    const c = (await provider.createCheckout(checkout())).ref;
    await provider.void(c);
    expect((await provider.retrieve(c)).state).toBe('cancelled');
  });

  it('void expires a pending charge, and is quiet for one already expired or failed', async () => {
    const ref = (await provider.createCheckout(checkout())).ref;
    await provider.void(ref);
    expect(standin.charge(ref)?.status).toBe('expired');
    expect(posts(`/charges/${ref}/expire`)).toHaveLength(1);
    await provider.void(ref);
    expect(posts(`/charges/${ref}/expire`)).toHaveLength(1);
    const failed = (await provider.createCheckout(checkout())).ref;
    standin.fail(failed);
    await expect(provider.void(failed)).resolves.toBeUndefined();
    expect(standin.charge(failed)?.status).toBe('failed');
  });

  it('a charge paid or failed while being expired: the state read afterwards decides', async () => {
    const paid = (await provider.createCheckout(checkout())).ref;
    standin.beforeNext('/expire', () => standin.succeed(paid));
    const err = await errorOf(provider.void(paid));
    expect((err as ProviderRefusedError).code).toBe('already_succeeded');
    expect(posts(`/charges/${paid}/expire`)).toHaveLength(1);
    const failed = (await provider.createCheckout(checkout())).ref;
    standin.beforeNext('/expire', () => standin.fail(failed));
    await expect(provider.void(failed)).resolves.toBeUndefined();
    // A refusal while the charge is still pending is not swallowed.
    const stuck = (await provider.createCheckout(checkout())).ref;
    standin.failNext(400, { code: 'failed_expire' }, '/expire');
    const refused = await errorOf(provider.void(stuck));
    expect((refused as ProviderRefusedError).code).toBe('failed_expire');
  });

  it('void refuses a paid charge with already_succeeded', async () => {
    const ref = (await provider.createCheckout(checkout())).ref;
    standin.succeed(ref);
    const err = await errorOf(provider.void(ref));
    expect(err).toBeInstanceOf(ProviderRefusedError);
    expect((err as ProviderRefusedError).code).toBe('already_succeeded');
    expect(standin.charge(ref)?.status).toBe('successful');
  });
});

describe('opn adapter: refunds', () => {
  it('a refund the provider completes is succeeded, and a retry with the same key returns it', async () => {
    const ref = (await provider.createCheckout(checkout())).ref;
    standin.succeed(ref);
    const refund = await provider.refund(ref, 25_000, 'refund-1');
    expect(refund).toEqual({ ref: expect.stringMatching(/^rfnd_test_/), status: 'succeeded' });
    expect(posts(`/charges/${ref}/refunds`)[0]!.body).toMatchObject({ amount: 25_000 });
    const again = await provider.refund(ref, 25_000, 'refund-1');
    expect(again.ref).toBe(refund.ref);
    expect(posts(`/charges/${ref}/refunds`)).toHaveLength(1);
  });

  it('a pending refund is pending until the provider completes it', async () => {
    const ref = (await provider.createCheckout(checkout())).ref;
    standin.succeed(ref);
    standin.refundsPending(true);
    const refund = await provider.refund(ref, 10_000, 'refund-2');
    expect(refund.status).toBe('pending');
    expect(await provider.retrieveRefund(ref, refund.ref)).toEqual({ ref: refund.ref, status: 'pending' });
    standin.completeRefund(ref, refund.ref);
    expect(await provider.retrieveRefund(ref, refund.ref)).toEqual({ ref: refund.ref, status: 'succeeded' });
  });

  it('a refund of an unpaid charge is refused with the provider code', async () => {
    const ref = (await provider.createCheckout(checkout())).ref;
    const err = await errorOf(provider.refund(ref, 100, 'refund-3'));
    expect(err).toBeInstanceOf(ProviderRefusedError);
    expect((err as ProviderRefusedError).code).toBe('failed_refund');
  });
});

describe('opn adapter: events', () => {
  async function paidCharge(): Promise<string> {
    const ref = (await provider.createCheckout(checkout())).ref;
    standin.succeed(ref);
    return ref;
  }

  it('a signed charge.complete for a paid charge settles, after re-reading the charge', async () => {
    const ref = await paidCharge();
    const before = standin.requests.length;
    const e = standin.signedEvent('charge.complete', ref);
    const verified = await provider.verifyEvent(Buffer.from(e.body), e.headers);
    expect(verified).toMatchObject({ type: 'charge.complete', ref, outcome: 'settle' });
    expect(verified.eventId).toMatch(/^evnt_test_/);
    const reads = standin.requests.slice(before).filter((r) => r.method === 'GET' && r.path === `/charges/${ref}`);
    expect(reads).toHaveLength(1);
  });

  it('an event saying successful for a charge the API says pending is ignored', async () => {
    const ref = (await provider.createCheckout(checkout())).ref;
    const e = standin.signedEvent('charge.complete', ref, { dataStatus: 'successful' });
    expect(await provider.verifyEvent(Buffer.from(e.body), e.headers)).toMatchObject({ ref, outcome: 'ignore' });
  });

  it('a failed charge fails; an event for an unknown charge is ignored', async () => {
    const ref = (await provider.createCheckout(checkout())).ref;
    standin.fail(ref);
    const e = standin.signedEvent('charge.complete', ref);
    expect((await provider.verifyEvent(Buffer.from(e.body), e.headers)).outcome).toBe('fail');
    const unknown = standin.signedEvent('charge.complete', 'chrg_test_nosuch');
    expect(await provider.verifyEvent(Buffer.from(unknown.body), unknown.headers)).toMatchObject({
      ref: 'chrg_test_nosuch',
      outcome: 'ignore',
    });
  });

  it('a refund event carries the refund as the API reports it', async () => {
    const ref = await paidCharge();
    standin.refundsPending(true);
    const refund = await provider.refund(ref, 25_000, 'r');
    standin.completeRefund(ref, refund.ref);
    const e = standin.signedEvent('refund.create', ref, { refundId: refund.ref });
    expect(await provider.verifyEvent(Buffer.from(e.body), e.headers)).toMatchObject({
      ref,
      outcome: 'ignore',
      refund: { ref: refund.ref, status: 'succeeded' },
    });
  });

  it('accepts either signature during a secret rotation', async () => {
    const ref = await paidCharge();
    const e = standin.signedEvent('charge.complete', ref, {
      secret: randomBytes(32).toString('base64'),
      alsoSignWith: WEBHOOK_SECRET,
    });
    expect((await provider.verifyEvent(Buffer.from(e.body), e.headers)).outcome).toBe('settle');
  });

  it('a forged, tampered, unsigned or stale event is refused before anything is read', async () => {
    const ref = await paidCharge();
    const before = standin.requests.length;
    const forged = standin.signedEvent('charge.complete', ref, { secret: randomBytes(32).toString('base64') });
    const good = standin.signedEvent('charge.complete', ref);
    const tampered = good.body.replace('charge.complete', 'charge.completf');
    const stale = standin.signedEvent('charge.complete', ref, { timestamp: Math.floor(Date.now() / 1000) - 301 });
    const future = standin.signedEvent('charge.complete', ref, { timestamp: Math.floor(Date.now() / 1000) + 301 });
    const { 'omise-signature': _s, ...unsigned } = good.headers;
    const { 'omise-signature-timestamp': _t, ...noTimestamp } = good.headers;
    const cases: Array<[string, Record<string, string>]> = [
      [forged.body, forged.headers],
      [tampered, good.headers],
      [good.body, unsigned],
      [good.body, noTimestamp],
      [stale.body, stale.headers],
      [future.body, future.headers],
      [good.body, { ...good.headers, 'omise-signature': 'zz' }],
    ];
    for (const [body, headers] of cases) {
      await expect(provider.verifyEvent(Buffer.from(body), headers)).rejects.toBeInstanceOf(BadSignatureError);
    }
    expect(standin.requests.length).toBe(before);
    // The tolerance is measured on the real clock handed in, not on the service clock.
    const late: Clock = { now: () => Date.now() + 10 * 60_000 };
    const lateProvider = opnProvider(account(), { realClock: late, timeoutMs: 2_000 });
    await expect(lateProvider.verifyEvent(Buffer.from(good.body), good.headers)).rejects.toBeInstanceOf(BadSignatureError);
    await expect(provider.verifyEvent(Buffer.from(good.body), good.headers)).resolves.toMatchObject({
      outcome: 'settle',
    });
  });

  it('an account without a webhook secret verifies nothing', async () => {
    const ref = await paidCharge();
    const e = standin.signedEvent('charge.complete', ref, { secret: '' });
    const noSecret = opnProvider(account({ webhookSecret: '' }), { realClock, timeoutMs: 2_000 });
    await expect(noSecret.verifyEvent(Buffer.from(e.body), e.headers)).rejects.toBeInstanceOf(BadSignatureError);
  });
});

describe('opn adapter: errors', () => {
  it('5xx, 429 and a provider that is down are unavailable; Retry-After is kept', async () => {
    standin.failNext(500);
    await expect(provider.retrieve('chrg_test_x')).rejects.toBeInstanceOf(ProviderUnavailableError);
    standin.failNext(429, { code: 'too_many_requests' });
    await expect(provider.retrieve('chrg_test_x')).rejects.toBeInstanceOf(ProviderUnavailableError);
    standin.setDown(true);
    const err = await errorOf(provider.createCheckout(checkout()));
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect((err as ProviderUnavailableError).retryAfterSeconds).toBe(30);
    standin.setDown(false);
    expect(standin.charges()).toHaveLength(0);
  });

  it('other 4xx are refusals with the Opn error code', async () => {
    const err = await errorOf(provider.retrieve('chrg_test_nosuch'));
    expect(err).toBeInstanceOf(ProviderRefusedError);
    expect((err as ProviderRefusedError).code).toBe('not_found');
    standin.failNext(400, { code: 'invalid_charge', message: 'amount is too small' });
    const bad = await errorOf(provider.createCheckout(checkout()));
    expect((bad as ProviderRefusedError).code).toBe('invalid_charge');
  });

  it('a wrong key is an authentication_failure refusal whose message holds no key', async () => {
    const wrongKey = `skey_test_${randomBytes(12).toString('hex')}`;
    const wrong = opnProvider(account({ secretKey: wrongKey }), { realClock, timeoutMs: 2_000 });
    const err = await errorOf(wrong.createCheckout(checkout()));
    expect(err).toBeInstanceOf(ProviderRefusedError);
    expect((err as ProviderRefusedError).code).toBe('authentication_failure');
    for (const secret of [wrongKey, Buffer.from(`${wrongKey}:`).toString('base64'), WEBHOOK_SECRET]) {
      expect(err.message).not.toContain(secret);
      expect(err.stack ?? '').not.toContain(secret);
      expect(JSON.stringify(err)).not.toContain(secret);
    }
  });

  it('no secret appears in any error the adapter raises', async () => {
    const errors: Error[] = [];
    standin.failNext(500, { message: SECRET_KEY });
    errors.push(await errorOf(provider.retrieve('chrg_test_x')));
    standin.failNext(400, { code: 'bad_request', message: SECRET_KEY });
    errors.push(await errorOf(provider.retrieve('chrg_test_x')));
    standin.setDown(true);
    errors.push(await errorOf(provider.createCheckout(checkout())));
    const forged = standin.signedEvent('charge.complete', 'chrg_test_x', { secret: randomBytes(32).toString('base64') });
    errors.push(await errorOf(provider.verifyEvent(Buffer.from(forged.body), forged.headers)));
    for (const err of errors) {
      for (const secret of [SECRET_KEY, WEBHOOK_SECRET, Buffer.from(`${SECRET_KEY}:`).toString('base64')]) {
        expect(`${err.message} ${JSON.stringify(err)}`).not.toContain(secret);
      }
    }
  });

  describe('network', () => {
    let hanging: Server;
    let hangingUrl: string;
    beforeEach(async () => {
      hanging = createServer(() => {
        // never answers
      });
      await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
      hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    });
    afterEach(async () => {
      hanging.closeAllConnections();
      await new Promise<void>((r) => hanging.close(() => r()));
    });

    it('a timeout and an unreachable host are unavailable', async () => {
      const slow = opnProvider(account({ apiBaseUrl: hangingUrl }), { realClock, timeoutMs: 200 });
      const started = Date.now();
      const err = await errorOf(slow.retrieve('chrg_test_x'));
      expect(err).toBeInstanceOf(ProviderUnavailableError);
      expect(err.message).toMatch(/200 ms/);
      expect(Date.now() - started).toBeLessThan(2_000);
      const closedPort = standin.url;
      await standin.close();
      standin = await startOpnStandin({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });
      const gone = opnProvider(account({ apiBaseUrl: closedPort }), { realClock, timeoutMs: 2_000 });
      const unreachable = await errorOf(gone.retrieve('chrg_test_x'));
      expect(unreachable).toBeInstanceOf(ProviderUnavailableError);
      expect(unreachable.message).not.toContain(SECRET_KEY);
    });
  });
});
