/**
 * Door access in a booking's window, as scenarios any transport runs (sandbox, MQTT with the gateway
 * simulator): on doorSite(), partner members with a card book the board room (door d1) or the hot desk
 * (door d2) through act_as tokens of the partner app (given actAs here); the device then holds them from the booking's
 * check-in window (15 min before the start by default) to its end.
 */
import type { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import type { TestService } from './test-service.js';
import { actAsToken, appToken, applySite, idOf, type SiteIds } from './fixtures.js';
import { PartnerClient, PARTNER_APP_ID, PARTNER_SECRET } from './partner-members.js';
import { deviceView, settled, waitForDevice } from './devices.js';
import { doorSite } from './doors.js';
import { at, dayAhead, setClock } from './catalogue.js';

const TZ = 'Asia/Bangkok';

/** A member's window as a device itself holds it (ISO, null for an open end). */
export interface Held {
  validFrom: string | null;
  validUntil: string | null;
}

export interface DoorHarness {
  svc: TestService;
  /** Switch a device unreachable or back (sandbox switch, or the gateway simulator's device). */
  setOnline(deviceId: string, online: boolean): Promise<void>;
  /** What the device itself holds for the member ({validFrom, validUntil} ISO or null), or undefined when nothing. */
  heldOnDevice?(deviceId: string, memberId: string): Held | undefined | Promise<Held | undefined>;
  timeoutMs: number;
  /** The site document (doorSite() by default; vendor transports give d1/d2 theirs). */
  site?: () => ReturnType<typeof doorSite>;
  /** Told the site's ids once applied (to map device ids to stand-ins). */
  onIds?(ids: SiteIds): void;
}

interface World {
  ids: SiteIds;
  api: PartnerClient;
  D: DateTime;
}

const enrollmentOf = (view: any, memberId: string) => view.enrollments.find((e: any) => e.memberId === memberId);
const ms = (iso: string | null | undefined) => (iso ? Date.parse(iso) : null);

/** The scenarios, on a service `harness()` gives once its beforeAll ran. */
export function doorWindowScenarios(harness: () => DoorHarness): void {
  let w: World;
  let n = 0;
  const h = () => harness();
  const dev = (key: string) => idOf(w.ids, key);
  const t = (hhmm: string, plusDays = 0) => at(w.D, hhmm, plusDays);

  async function setup(): Promise<void> {
    const { svc } = h();
    // The partner app books for its members too (act_as on the links its member PUTs make).
    const doc = (h().site?.() ?? doorSite()) as any;
    const partner = doc.apps.find((a: any) => a.appId === PARTNER_APP_ID);
    Object.assign(partner, { actAs: true });
    const ids = await applySite(svc, doc);
    h().onIds?.(ids);
    const api = new PartnerClient(svc, (await appToken(svc, PARTNER_APP_ID, PARTNER_SECRET)).access_token);
    const D = await dayAhead(svc, TZ, 2);
    w = { ids, api, D };
  }

  /** A partner member with a card (and an email, so bookings can name them as attendees); its id and an act_as token. */
  async function member(cards = true): Promise<{ id: string; email: string; token: string }> {
    n += 1;
    const ext = `door-${n}-${Math.random().toString(36).slice(2, 8)}`;
    const email = `${ext}@example.com`;
    const m = await w.api.putOk(ext, { firstName: 'Door', lastName: `Member ${n}`, email });
    if (cards) {
      const res = await w.api.credentials(ext, { cards: [{ cardNo: String(4_000_000 + n).padStart(10, '0') }] });
      expect(res.status, res.text).toBe(200);
    }
    const token = (await actAsToken(h().svc, { appId: PARTNER_APP_ID, secret: PARTNER_SECRET, subject: ext })).access_token;
    return { id: m.memberId, email, token };
  }

  async function book(token: string, asset: { room?: string; desk?: string }, from: string, to: string, extra = {}, plusDays = 0) {
    const res = await h().svc.request('POST', '/meetings', {
      token,
      body: {
        ...(asset.room ? { meetingRoomId: dev(asset.room) } : { deskId: dev(asset.desk!) }),
        title: 'Door test',
        startDateTime: t(from, plusDays),
        endDateTime: t(to, plusDays),
        ...extra,
      },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.data;
  }

  /** Waits until device `key` has settled holding `memberId` with exactly this window (null: not at all). */
  async function holds(key: string, memberId: string, window: { from: string; until: string } | null): Promise<void> {
    const want = window && { validFrom: Date.parse(window.from), validUntil: Date.parse(window.until) };
    const view = await waitForDevice(
      h().svc,
      dev(key),
      (v) => {
        if (!settled(v) || !v.online) return false;
        const e = enrollmentOf(v, memberId);
        if (!want) return !e;
        return !!e && ms(e.validFrom) === want.validFrom && ms(e.validUntil) === want.validUntil;
      },
      h().timeoutMs,
    );
    if (want) expect(enrollmentOf(view, memberId).cardNos.length).toBe(1);
    const onDevice = await h().heldOnDevice?.(dev(key), memberId);
    if (h().heldOnDevice) {
      if (!want) expect(onDevice).toBeUndefined();
      else expect({ validFrom: ms(onDevice?.validFrom), validUntil: ms(onDevice?.validUntil) }).toEqual(want);
    }
  }

  const win = (from: string, until: string, plusDays = 0) => ({ from: t(from, plusDays), until: t(until, plusDays) });
  const clockTo = (hhmm: string, plusDays = 0) => setClock(h().svc, t(hhmm, plusDays));
  const patch = async (token: string, id: string, body: Record<string, unknown>) => {
    const res = await h().svc.request('PATCH', `/meetings/${id}`, { token, body });
    expect(res.status, res.text).toBe(200);
  };
  const action = async (token: string, id: string, what: 'cancel' | 'check-in' | 'check-out') => {
    const res = await h().svc.request('POST', `/meetings/${id}/${what}`, { token, body: {} });
    expect(res.status, res.text).toBeLessThan(300);
  };

  describe("door access in the booking's window", () => {
    it('setup: the door site, the day after tomorrow at 07:00', async () => {
      await setup();
      await clockTo('07:00');
      expect(w.ids).toBeTypeOf('object');
    });

    it('book → the door holds the member from 15 min before the start to the end; move → the window moves; cancel → withdrawn', async () => {
      const m = await member();
      const b = await book(m.token, { room: 'board' }, '09:00', '10:00');
      await holds('d1', m.id, win('08:45', '10:00'));
      // Not on the desk's door, nor on any group device the partner app does not grant for it.
      expect(enrollmentOf(await deviceView(h().svc, dev('d2')), m.id)).toBeUndefined();
      await patch(m.token, b._id, { startDateTime: t('11:00'), endDateTime: t('12:30') });
      await holds('d1', m.id, win('10:45', '12:30'));
      await action(m.token, b._id, 'cancel');
      await holds('d1', m.id, null);
    });

    it('attendee members get the window too (and lose it when taken off); a member without credentials gets nothing', async () => {
      const org = await member();
      const att = await member();
      const bare = await member(false);
      const b = await book(org.token, { room: 'board' }, '13:00', '14:00', { attendees: [{ email: att.email }, { email: bare.email }] });
      await holds('d1', org.id, win('12:45', '14:00'));
      await holds('d1', att.id, win('12:45', '14:00'));
      expect(enrollmentOf(await deviceView(h().svc, dev('d1')), bare.id)).toBeUndefined();
      // An attendee taken off the booking loses the window; the organizer keeps it.
      await patch(org.token, b._id, { attendees: [{ email: bare.email }] });
      await holds('d1', att.id, null);
      await holds('d1', org.id, win('12:45', '14:00'));
      await action(org.token, b._id, 'cancel');
      await holds('d1', org.id, null);
      await holds('d1', att.id, null);
    });

    it('the desk opens its own door (d2); a room without accessDevices changes nothing on any device', async () => {
      const m = await member();
      const b = await book(m.token, { desk: 'hot1' }, '09:00', '10:00', {}, 1);
      await holds('d2', m.id, win('08:45', '10:00', 1));
      expect(enrollmentOf(await deviceView(h().svc, dev('d1')), m.id)).toBeUndefined();
      await action(m.token, b._id, 'cancel');
      await holds('d2', m.id, null);

      // `other` is in the app's groups: the lobby turnstile t1 holds them for good (no window).
      const other = await member();
      await waitForDevice(h().svc, dev('t1'), (v) => settled(v) && !!enrollmentOf(v, other.id), h().timeoutMs);
      await book(other.token, { room: 'uA202' }, '09:00', '10:00', {}, 1);
      await new Promise((r) => setTimeout(r, 600));
      for (const k of ['d1', 'd2', 't1', 't2', 'g1', 's1']) {
        const v = await deviceView(h().svc, dev(k));
        expect(v.pendingChanges).toBe(0);
        const e = enrollmentOf(v, other.id);
        if (['t1', 't2', 'g1'].includes(k)) expect(e).toMatchObject({ validFrom: null, validUntil: null });
        else expect(e).toBeUndefined();
      }
    });

    it('two bookings: after the first ends the door holds the next window', async () => {
      const m = await member();
      const first = await book(m.token, { room: 'board' }, '09:00', '10:00', {}, 2);
      await book(m.token, { room: 'board' }, '15:00', '16:00', {}, 2);
      await holds('d1', m.id, win('08:45', '10:00', 2));
      await clockTo('09:05', 2);
      // Checked in (so no no-show release): the first window runs to its end, then the door moves on.
      await action(m.token, first._id, 'check-in');
      await holds('d1', m.id, win('08:45', '10:00', 2));
      await clockTo('10:01', 2);
      await holds('d1', m.id, win('14:45', '16:00', 2));
      await clockTo('16:01', 2);
      await holds('d1', m.id, null);
    });

    it('check-out withdraws; a no-show release withdraws', async () => {
      const m = await member();
      const a = await book(m.token, { room: 'board' }, '09:00', '10:00', {}, 3);
      const b = await book(m.token, { desk: 'hot1' }, '09:00', '10:00', {}, 3);
      await holds('d1', m.id, win('08:45', '10:00', 3));
      await holds('d2', m.id, win('08:45', '10:00', 3));
      await clockTo('08:50', 3);
      await action(m.token, a._id, 'check-in');
      await holds('d1', m.id, win('08:45', '10:00', 3));
      await clockTo('09:20', 3);
      // The desk was never checked in: released as a no-show (15 min after the start).
      await holds('d2', m.id, null);
      await action(m.token, a._id, 'check-out');
      await holds('d1', m.id, null);
      expect(b._id).toBeTypeOf('string');
    });

    it('a device offline during a move and a cancel comes back with the current state, never an expired window', async () => {
      const m = await member();
      const d1 = dev('d1');
      const a = await book(m.token, { room: 'board' }, '09:00', '10:00', {}, 4);
      await holds('d1', m.id, win('08:45', '10:00', 4));
      await h().setOnline(d1, false);
      await patch(m.token, a._id, { startDateTime: t('11:00', 4), endDateTime: t('12:00', 4) });
      const b = await book(m.token, { room: 'board' }, '13:00', '14:00', {}, 4);
      await action(m.token, a._id, 'cancel');
      await new Promise((r) => setTimeout(r, 300));
      await h().setOnline(d1, true);
      await holds('d1', m.id, win('12:45', '14:00', 4));

      // Offline again while the second window runs out: back online, the member is gone (not an expired window).
      await h().setOnline(d1, false);
      await clockTo('13:05', 4);
      await action(m.token, b._id, 'check-in');
      await clockTo('14:05', 4);
      await new Promise((r) => setTimeout(r, 300));
      await h().setOnline(d1, true);
      await holds('d1', m.id, null);
    });
  });
}
