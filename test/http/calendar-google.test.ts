/**
 * Room calendars connected to Google Workspace, against the Google Calendar
 * stand-in (test/support/google-standin.ts): the shared scenarios, plus Google's own
 * wire: channel messages authenticated by channel id, token and resource id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeCalendarScenarios, ROOM_EMAILS, startCalendarScenario, type CalendarScenarioCtx } from '../support/calendar-scenarios.js';
import { startGoogleStandIn } from '../support/google-standin.js';
import type { CalendarStandIn } from '../support/calendar-standin.js';

const connection = (g: CalendarStandIn) => ({ provider: 'google', ...g.credentials });

describeCalendarScenarios('Google Calendar', async () => {
  const standIn = await startGoogleStandIn();
  return { standIn, connection: connection(standIn) };
});

describe('Google Calendar: channel specifics', () => {
  let s: CalendarScenarioCtx;
  let g: CalendarStandIn;
  beforeAll(async () => {
    g = await startGoogleStandIn();
    s = await startCalendarScenario(g, connection(g));
  });
  afterAll(async () => {
    await s?.c.close();
    await s?.rx.close();
    await g?.close();
  });

  const post = (headers: Record<string, string>) =>
    s.c.svc.request('POST', `/calendar/webhooks/${s.connectionId}`, { token: null, raw: '', headers });

  it('refuses a message whose channel, token or resource id does not match (403), and needs the channel headers (400)', async () => {
    const r = ROOM_EMAILS[0]!;
    const row = await s.c.svc.services.storage.db
      .selectFrom('calendar_rooms')
      .selectAll()
      .where('room_id', '=', s.c.id(r.key))
      .executeTakeFirstOrThrow();
    const base = {
      'x-goog-channel-id': row.subscription_id!,
      'x-goog-resource-id': row.resource_id!,
      'x-goog-resource-state': 'exists',
      'x-goog-message-number': '99',
    };
    expect((await post({ ...base, 'x-goog-channel-token': 'wrong' })).status).toBe(403);
    expect((await post({ ...base, 'x-goog-channel-id': 'unknown', 'x-goog-channel-token': 'x' })).status).toBe(403);
    const missing = await post({ 'x-goog-channel-token': 'x' });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('KS001');
    // A `sync` message of a channel not stored yet (it can arrive before the watch's answer) is acknowledged.
    expect((await post({ ...base, 'x-goog-channel-id': 'new-channel', 'x-goog-resource-state': 'sync' })).status).toBe(200);
  });

  it('a message arriving late (a lower message number, after newer ones) changes nothing: the current state is read', async () => {
    const r = ROOM_EMAILS[6]!;
    const id = await g.personCreates(r.email, {
      organizer: { email: 'alice@example.com', name: 'Alice' },
      title: 'Late',
      start: s.ms('10:00', 3),
      end: s.ms('11:00', 3),
    });
    await s.settle();
    await g.personUpdates(r.email, id, { start: s.ms('12:00', 3), end: s.ms('13:00', 3) });
    await s.settle();
    const m = await s.meetingOf(id);
    expect(Date.parse(m.startDateTime)).toBe(s.ms('12:00', 3));
    const row = await s.c.svc.services.storage.db
      .selectFrom('calendar_rooms')
      .selectAll()
      .where('room_id', '=', s.c.id(r.key))
      .executeTakeFirstOrThrow();
    const res = await post({
      'x-goog-channel-id': row.subscription_id!,
      'x-goog-channel-token': s.c.svc.services.secretBox.open(row.client_state_enc!),
      'x-goog-resource-id': row.resource_id!,
      'x-goog-resource-state': 'exists',
      'x-goog-message-number': '1',
    });
    expect(res.status).toBe(200);
    await s.settle();
    const after = await s.meetingOf(id);
    expect(Date.parse(after.startDateTime)).toBe(s.ms('12:00', 3));
    expect(after.history).toEqual(m.history);
  });

  it('renewing a channel starts a new one and stops the old one', async () => {
    const r = ROOM_EMAILS[3]!;
    const before = g.subscriptions().find((x) => x.active && x.calendarId === r.email)!;
    await s.c.svc.services.storage.db
      .updateTable('calendar_rooms')
      .set({ subscribe_due_at: Date.now() - 1 })
      .where('room_id', '=', s.c.id(r.key))
      .execute();
    await s.settle();
    const active = g.subscriptions().filter((x) => x.active && x.calendarId === r.email);
    expect(active).toHaveLength(1);
    expect(active[0]!.id).not.toBe(before.id);
    expect(g.subscriptions().find((x) => x.id === before.id)?.active).toBe(false);
  });
});
