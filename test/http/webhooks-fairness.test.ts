/**
 * Delivery scheduling across listeners (regressions found by bench/delivery.ts):
 * - a listener that never answers, with more due deliveries than one read of the
 *   due list, does not hold up another listener (its backlog used to fill every
 *   read, so the healthy listener got nothing until the backlog drained);
 * - a listener that answers at once is not throttled to its concurrency budget
 *   per poll interval (it used to get at most 4 attempts every 250 ms).
 */
import { plainBookingColumns } from '../../src/modules/booking/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.js';
import { siteDocument } from '../support/fixtures.js';
import { everyDay } from '../support/catalogue.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { writeTransaction } from '../../src/platform/db/transactions.js';
import { MeetingRepository, type MeetingRow } from '../../src/modules/booking/meeting-repository.js';
import { bookingFacts } from '../../src/modules/booking/booking-change.js';
import { scopeOf } from '../../src/modules/booking/booking-changes.js';
import { newId } from '../../src/platform/ids.js';

const SECRET = 'fairness-secret-0123456789abcdef0123456789';

describe('delivery scheduling across listeners', () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  let ids: any;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    receiver.respond('/hang', 'hang');
    svc = await startTestService({ env: { WEBHOOK_TIMEOUT_MS: '8000' } });
    const doc = siteDocument() as any;
    doc.zones = [{ key: 'z', project: 'tower', name: 'Tower' }];
    doc.floors = [{ key: 'f', zone: 'z', name: '12F' }];
    doc.rooms = [{ key: 'r', floor: 'f', name: 'Orchid', capacity: 6, cleanupMinutes: 0, config: everyDay('00:00:00', '24:00:00') }];
    doc.webhooks = [
      { key: 'slow', project: 'tower', url: receiver.url('/hang'), secret: SECRET, events: ['ROOM_ENDING_SOON'] },
      { key: 'fast', project: 'tower', url: receiver.url('/fast'), secret: SECRET, events: ['ROOM_REMINDER'] },
    ];
    const applied = await svc.ops('POST', '/ops/v1/apply', doc);
    expect(applied.status, applied.text).toBe(200);
    ids = applied.body.data.idsByKind;
  });

  afterAll(async () => {
    await receiver?.close();
    await svc?.close();
  });

  /** Emits `n` events of `kind` for one booking, in one transaction, through the outbox. */
  async function emit(kind: 'REMINDER' | 'ENDING_SOON', n: number): Promise<void> {
    const { db, engine } = svc.services.storage;
    const now = svc.services.clock.now();
    const id = newId(now);
    const start = now + 3_600_000;
    const end = start + 1_800_000;
    const room = ids.rooms.r as string;
    const project = ids.projects.tower as string;
    const scope = scopeOf('room', (await svc.services.catalogue.assetInContext('room', ids.rooms.r as string))!);
    await writeTransaction(db, engine, async (trx) => {
      const meetings = new MeetingRepository(db);
      const row = {
        id,
        project_id: project,
        asset_kind: 'room',
        asset_id: room,
        room_id: room,
        desk_id: null,
        title: 'fairness',
        body: '',
        start_at: start,
        end_at: end,
        booked_end_at: end,
        span_end_at: end,
        all_day: false,
        time_period: null,
        status: 'active',
        pin_enc: 'x',
        pin_failures: 0,
        organizer_user_id: ids.users.alice,
        organizer: { email: 'alice@example.com', name: 'Alice Example' } as MeetingRow['organizer'],
        attendees: [],
        ...plainBookingColumns(),
        created_at: now,
        updated_at: now,
      };
      await meetings.insertHeld(
        row,
        [{ id, meeting_id: id, project_id: project, asset_id: room, occurrence_index: 0, start_at: start, end_at: end }],
        trx,
      );
      const facts = bookingFacts(scope, row as MeetingRow, { start, end });
      for (let i = 0; i < n; i++) await svc.services.outbox.emit(trx, { meetingId: id, facts, detail: { kind }, at: now });
    });
  }

  it('a hanging listener with a large backlog does not hold up a healthy one', async () => {
    await emit('ENDING_SOON', 150); // more than one read of the due list, all for the hanging listener
    await receiver.waitForCount('/hang', 4, 5_000);
    await emit('REMINDER', 10);
    await receiver.waitForCount('/fast', 10, 5_000);
    // The hanging listener never has more than its budget in flight.
    expect(receiver.on('/hang').length).toBe(4);
  });

  it('a listener that answers at once gets more than its budget per poll interval', async () => {
    const before = receiver.on('/fast').length;
    const t0 = Date.now();
    await emit('REMINDER', 200);
    await receiver.waitForCount('/fast', before + 200, 20_000);
    const perSecond = 200 / ((Date.now() - t0) / 1000);
    // Refilled as attempts end, not 4 per 250 ms poll (16 a second).
    expect(perSecond).toBeGreaterThan(30);
  });
});
