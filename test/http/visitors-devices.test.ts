/**
 * Visitor passes on the building's devices (issue: "the visitor's code is enrolled
 * on the project's readers for the invite's window, through the same device sync,
 * and withdrawn after it ends or on cancel"): readers hold the QR code, the
 * licence-plate camera the plate, both with the invite's window; devices of other
 * projects hold nothing; cancel and expiry withdraw the pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVisitorService, type VisitorCtx } from '../support/visitors.js';
import { deviceView, settled, waitForDevice } from '../support/devices.js';

let c: VisitorCtx;

beforeAll(async () => {
  c = await startVisitorService();
});
afterAll(async () => {
  await c?.close();
});

const passOf = (view: any, inviteId: string) => view.visitorPasses.find((p: any) => p.inviteId === inviteId);

describe('visitor passes on devices', () => {
  it("an invite puts its QR code on the project's readers and its plate on the camera, for its window", async () => {
    const inv = await c.inviteOk({
      visitorName: 'Dev Dana',
      licensePlate: '1กข 1234',
      startDateTime: c.t('09:00'),
      endDateTime: c.t('12:00'),
    });
    const window = { validFrom: new Date(c.t('09:00')).toISOString(), validUntil: new Date(c.t('12:00')).toISOString() };
    for (const key of ['t1', 'side']) {
      const view = await waitForDevice(c.svc, c.id(key), (v) => settled(v) && !!passOf(v, inv._id));
      expect(passOf(view, inv._id)).toEqual({ inviteId: inv._id, qrCode: true, licensePlate: false, ...window });
      expect(JSON.stringify(view)).not.toContain(inv.qrCardCode);
    }
    const cam = await waitForDevice(c.svc, c.id('cam'), (v) => settled(v) && !!passOf(v, inv._id));
    expect(passOf(cam, inv._id)).toEqual({ inviteId: inv._id, qrCode: false, licensePlate: true, ...window });
    expect(passOf(await deviceView(c.svc, c.id('ax1')), inv._id)).toBeUndefined();
    // Members are not visitors: the enrollments list is for members only.
    expect((await deviceView(c.svc, c.id('t1'))).enrollments.some((e: any) => e.memberId === inv._id)).toBe(false);
  });

  it('an invite without a plate puts nothing on the camera', async () => {
    const inv = await c.inviteOk({ visitorName: 'Dev Walker', startDateTime: c.t('09:00'), endDateTime: c.t('12:00') });
    await waitForDevice(c.svc, c.id('t1'), (v) => settled(v) && !!passOf(v, inv._id));
    expect(passOf(await waitForDevice(c.svc, c.id('cam'), settled), inv._id)).toBeUndefined();
  });

  it('cancel withdraws the pass from every device', async () => {
    const inv = await c.inviteOk({
      visitorName: 'Dev Cancel',
      licensePlate: 'กท-99',
      startDateTime: c.t('09:00'),
      endDateTime: c.t('12:00'),
    });
    await waitForDevice(c.svc, c.id('cam'), (v) => settled(v) && !!passOf(v, inv._id));
    expect((await c.cancel(inv._id)).status).toBe(200);
    for (const key of ['t1', 'side', 'cam']) await waitForDevice(c.svc, c.id(key), (v) => settled(v) && !passOf(v, inv._id));
  });

  it('the end of the window withdraws the pass (the sandbox clock moving past it)', async () => {
    const inv = await c.inviteOk({ visitorName: 'Dev Expire', startDateTime: c.t('06:00'), endDateTime: c.t('07:00') });
    await waitForDevice(c.svc, c.id('t1'), (v) => settled(v) && !!passOf(v, inv._id));
    const res = await c.svc.ops('POST', '/ops/v1/clock', { set: c.t('07:00') });
    expect(res.status, res.text).toBe(200);
    await waitForDevice(c.svc, c.id('t1'), (v) => settled(v) && !passOf(v, inv._id));
    expect((await c.get(inv._id)).body.data.status).toBe('expired');
  });
});
