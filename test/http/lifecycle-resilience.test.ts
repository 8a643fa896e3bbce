/**
 * A lifecycle step that fails (a bug, a bad row) is reported and retried later,
 * but never holds up the other bookings' steps — over HTTP with the sandbox clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookService, type WebhookCtx } from '../support/webhook-site.js';
import type { TimerRow } from '../../src/modules/lifecycle/timer-repository.js';

describe('lifecycle worker resilience', () => {
  let c: WebhookCtx;

  beforeAll(async () => {
    c = await startWebhookService({
      rooms: [
        { key: 'ra', name: 'Room A' },
        { key: 'rb', name: 'Room B' },
      ],
      clockAt: '06:00',
    });
  });
  afterAll(async () => {
    await c?.close();
  });

  it('a failing step leaves the others applied and is applied once it can be', async () => {
    const bad = await c.bookRoom('ra', '08:00', '09:00');
    const good = await c.bookRoom('rb', '08:30', '09:30');
    const worker = c.svc.services.lifecycle;
    const original = worker.fire.bind(worker);
    const errors: unknown[] = [];
    worker.fire = async (t: TimerRow) => {
      if (t.meeting_id === bad._id) {
        errors.push(t.kind);
        throw new Error('injected failure');
      }
      return original(t);
    };
    try {
      await c.clockTo('10:00');
      expect((await c.get(good._id)).status).toBe('cancelled'); // its no-show step ran, after the failing ones
      expect((await c.get(bad._id)).status).toBe('active');
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      worker.fire = original;
    }
    await c.advance(1);
    const recovered = await c.get(bad._id);
    expect(recovered.status).toBe('cancelled');
    expect(recovered.histories.filter((h: { source: string }) => h.source === 'system')).toHaveLength(1);
  });
});
