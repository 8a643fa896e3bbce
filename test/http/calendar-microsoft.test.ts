/**
 * Room calendars connected to Microsoft 365, against the Graph stand-in
 * (test/support/graph-standin.ts): the shared scenarios, plus Graph's own wire:
 * the validation handshake and lifecycle notifications.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeCalendarScenarios, ROOM_EMAILS, startCalendarScenario, type CalendarScenarioCtx } from '../support/calendar-scenarios.js';
import { startGraphStandIn, type GraphStandIn } from '../support/graph-standin.js';

const connection = (g: GraphStandIn) => ({ provider: 'microsoft', ...g.credentials });

describeCalendarScenarios('Microsoft 365', async () => {
  const standIn = await startGraphStandIn();
  return { standIn, connection: connection(standIn) };
});

describe('Microsoft 365: Graph specifics', () => {
  let s: CalendarScenarioCtx;
  let g: GraphStandIn;
  beforeAll(async () => {
    g = await startGraphStandIn();
    s = await startCalendarScenario(g, connection(g));
  });
  afterAll(async () => {
    await s?.c.close();
    await s?.rx.close();
    await g?.close();
  });

  it('answers the validation handshake by echoing the token as text/plain, and 404 for an unknown connection', async () => {
    const res = await s.c.svc.request('POST', `/calendar/webhooks/${s.connectionId}?validationToken=Validation%3A%20abc%2B1`, {
      token: null,
      raw: '',
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toBe('Validation: abc+1');
    const unknown = await s.c.svc.request('POST', '/calendar/webhooks/nope?validationToken=x', { token: null, raw: '' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ success: false, code: 'KS005' });
  });

  it('a notification without a matching subscription, or not JSON, changes nothing', async () => {
    const res = await s.c.svc.request('POST', `/calendar/webhooks/${s.connectionId}`, {
      token: null,
      body: { value: [{ subscriptionId: 'not-ours', clientState: 'x', changeType: 'updated' }] },
    });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ success: false, code: 'KS003' });
    const bad = await s.c.svc.request('POST', `/calendar/webhooks/${s.connectionId}`, {
      token: null,
      raw: 'nope',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('KS001');
  });

  it('a notification arriving late, after newer ones, changes nothing: the service reads the current state', async () => {
    const r = ROOM_EMAILS[7]!;
    const id = await g.personCreates(r.email, {
      organizer: { email: 'alice@example.com', name: 'Alice' },
      title: 'Late',
      start: s.ms('10:00', 3),
      end: s.ms('11:00', 3),
    });
    await s.settle();
    const early = g.notifications.length - 1;
    await g.personUpdates(r.email, id, { start: s.ms('12:00', 3), end: s.ms('13:00', 3) });
    await s.settle();
    const m = await s.meetingOf(id);
    expect(Date.parse(m.startDateTime)).toBe(s.ms('12:00', 3));
    // The first notification (about the creation) again, now out of order.
    const late = g.notifications[early]!;
    const res = await s.c.svc.request('POST', `/calendar/webhooks/${s.connectionId}`, { token: null, body: late.body });
    expect(res.status).toBe(202);
    await s.settle();
    const after = await s.meetingOf(id);
    expect(Date.parse(after.startDateTime)).toBe(s.ms('12:00', 3));
    expect(after.history).toEqual(m.history);
  });

  it('subscriptionRemoved re-creates the subscription and reads the room again; reauthorizationRequired renews it', async () => {
    const r = ROOM_EMAILS[5]!;
    const before = g.subscriptions().find((x) => x.active && x.calendarId === r.email)!;
    const statuses = await g.lifecycle(r.email, 'subscriptionRemoved');
    expect(statuses.every((x) => x === 202)).toBe(true);
    await s.settle();
    const now = g.subscriptions().filter((x) => x.active && x.calendarId === r.email);
    expect(now).toHaveLength(1);
    expect(now[0]!.id).not.toBe(before.id);
    const expiry = now[0]!.expiresAt;
    await g.lifecycle(r.email, 'reauthorizationRequired');
    await s.settle();
    const renewed = g.subscriptions().find((x) => x.active && x.calendarId === r.email)!;
    expect(renewed.id).toBe(now[0]!.id);
    expect(renewed.expiresAt).toBeGreaterThanOrEqual(expiry);
  });
});
