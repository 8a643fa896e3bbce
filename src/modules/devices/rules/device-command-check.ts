/**
 * What a device refuses as bad input (pure), shared by the sandbox devices and the
 * reference gateway so both behave alike. Such a refusal is recorded on the device
 * view and never retried: sending the same command again cannot succeed.
 *
 * HikVision-style terminals take a face picture of at most 200 KB in JPEG or PNG,
 * within the kind's pixel limits (face-limits.ts), a JPEG baseline; a larger,
 * progressive or unreadable picture is refused. The service sends only pictures it
 * derived within these limits, so a refusal here means a device unlike the rules. Card numbers must fit the device's
 * format, and a visitor pass needs a QR code or a plate.
 */
import type { WireCommand } from '../../../contract/device-wire.js';
import { faceLimitsFor } from './face-limits.js';
import { imageHeader } from './image-header.js';

export const DEVICE_FACE_MAX_BYTES = 200 * 1024;

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff]);

export type CommandCheck = { ok: true } | { ok: false; message: string };

export function checkCommand(cmd: WireCommand, deviceKind: string): CommandCheck {
  if (cmd.op === 'remove') return { ok: true };
  if (cmd.face) {
    const bytes = Buffer.from(cmd.face.data, 'base64');
    const isPng = bytes.subarray(0, 8).equals(PNG) && cmd.face.mime === 'image/png';
    const isJpeg = bytes.subarray(0, 3).equals(JPEG) && cmd.face.mime === 'image/jpeg';
    if (!isPng && !isJpeg) return { ok: false, message: 'face photo is not a JPEG or PNG image the device can read' };
    if (bytes.length > DEVICE_FACE_MAX_BYTES) {
      return {
        ok: false,
        message: `face photo is ${Math.ceil(bytes.length / 1024)} KB; the device takes at most ${DEVICE_FACE_MAX_BYTES / 1024} KB`,
      };
    }
    const header = imageHeader(bytes);
    if (!header) return { ok: false, message: 'face photo header cannot be read' };
    if (header.progressive) return { ok: false, message: 'face photo is a progressive JPEG; the device takes baseline JPEG only' };
    const limits = faceLimitsFor(deviceKind);
    if (limits && (header.width > limits.width || header.height > limits.height)) {
      return {
        ok: false,
        message: `face photo is ${header.width}x${header.height} pixels; the device takes at most ${limits.width}x${limits.height}`,
      };
    }
  }
  for (const c of cmd.cards ?? []) {
    if (!c.cardNo) return { ok: false, message: `card ${c.uid} cannot be written in the device's format ${c.format}` };
  }
  if (cmd.subject.kind === 'visitor' && !cmd.qrCode && !(cmd.plates ?? []).length) {
    return { ok: false, message: `visitor pass without a QR code or plate for a ${deviceKind}` };
  }
  return { ok: true };
}
