/**
 * A HikVision terminal's event notification (HTTP host notification, JSON form) as door events. The body
 * is JSON, or multipart/form-data with a JSON part (`event_log` or `AccessControllerEvent` in practice)
 * and picture parts, which are ignored (the route takes the JSON parts out: isapi-routes.ts). Only `AccessControllerEvent` alerts become events.
 *
 * Granted or refused, by `majorEventType` 5 (event) and `subEventType` (the ACS minor codes):
 *   granted: 1 card, 2 card+password, 38 fingerprint, 57 face+password, 60 face+fingerprint,
 *            63 face+card, 66 face+card+fingerprint, 69 employeeNo+fingerprint, 72 employeeNo+fingerprint+password,
 *            75 face, 77 employeeNo+face, 104 QR code (firmware-dependent; not confirmed)
 *   refused: 3 card+password failed, 6 card without permission, 7 card outside its schedule, 8 card expired,
 *            9 unknown card, 39 fingerprint failed, 49 unknown fingerprint, 58 face+password failed,
 *            61 face+fingerprint failed, 64 face+card failed, 67 face+card+fingerprint failed,
 *            70 employeeNo+fingerprint failed, 73 employeeNo+fingerprint+password failed, 76 face failed,
 *            78 employeeNo+face failed, 80 face not recognised, 105 QR code failed (not confirmed)
 * Any other code (door opened, alarms, remote open) is not an access event and is dropped.
 */
import { createHash } from 'node:crypto';
import { DateTime } from 'luxon';
import type { CredentialKind, DoorEvent } from '../transport.js';
import { subjectOfEmployeeNo } from './isapi-transport.js';

const GRANTED: Record<number, CredentialKind> = {
  1: 'card',
  2: 'card',
  38: 'fingerprint',
  57: 'face',
  60: 'face',
  63: 'face',
  66: 'face',
  69: 'fingerprint',
  72: 'fingerprint',
  75: 'face',
  77: 'face',
  104: 'qr',
};
const REFUSED: Record<number, CredentialKind> = {
  3: 'card',
  6: 'card',
  7: 'card',
  8: 'card',
  9: 'card',
  39: 'fingerprint',
  49: 'fingerprint',
  58: 'face',
  61: 'face',
  64: 'face',
  67: 'face',
  70: 'fingerprint',
  73: 'fingerprint',
  76: 'face',
  78: 'face',
  80: 'face',
  105: 'qr',
};
/** MAJOR_EVENT: access results are reported under it. */
const MAJOR_EVENT = 5;

export interface AccessControllerEvent {
  majorEventType?: number;
  subEventType?: number;
  employeeNoString?: string;
  employeeNo?: number | string;
  cardNo?: string;
  serialNo?: number;
  currentVerifyMode?: string;
  cardReaderNo?: number;
}

export interface EventNotificationAlert {
  dateTime?: string;
  eventType?: string;
  AccessControllerEvent?: AccessControllerEvent;
}

/** The credential a verify mode names (`card`, `face`, `cardOrFace`, `fingerPrint`, ...). */
function kindOfVerifyMode(mode: string | undefined): CredentialKind | null {
  if (!mode) return null;
  const m = mode.toLowerCase();
  if (m === 'card') return 'card';
  if (m === 'face') return 'face';
  if (m === 'fingerprint') return 'fingerprint';
  if (m.includes('qr')) return 'qr';
  if (m === 'employeenoandpw' || m === 'password') return 'pin';
  return null; // combined modes ("cardOrFace") say what was allowed, not what was shown
}

/** One alert as a door event for `deviceId`, or null when it is not an access result. */
export function doorEventOf(deviceId: string, alert: EventNotificationAlert, zone: string): DoorEvent | null {
  const ev = alert.AccessControllerEvent;
  if (!ev || (alert.eventType && alert.eventType !== 'AccessControllerEvent')) return null;
  if (Number(ev.majorEventType) !== MAJOR_EVENT) return null;
  const sub = Number(ev.subEventType);
  const granted = sub in GRANTED;
  if (!granted && !(sub in REFUSED)) return null;
  const byCode = granted ? GRANTED[sub]! : REFUSED[sub]!;
  const credentialKind = kindOfVerifyMode(ev.currentVerifyMode) ?? byCode;
  const employeeNo = ev.employeeNoString ?? (ev.employeeNo !== undefined ? String(ev.employeeNo) : undefined);
  const subject = subjectOfEmployeeNo(employeeNo);
  const at = timeOf(alert.dateTime, zone);
  if (at === null) return null;
  const eventKey =
    ev.serialNo !== undefined && ev.serialNo !== null
      ? `serial:${ev.serialNo}`
      : `hash:${createHash('sha256')
          .update(`${alert.dateTime}|${sub}|${employeeNo ?? ''}|${ev.cardNo ?? ''}`)
          .digest('hex')
          .slice(0, 32)}`;
  return { deviceId, eventKey, at, granted, credentialKind, subject, cardNo: ev.cardNo ?? null };
}

/** `dateTime` with an offset as given; without one, in the device's zone. */
export function timeOf(dateTime: string | undefined, zone: string): number | null {
  if (!dateTime) return null;
  const hasOffset = /(Z|[+-]\d{2}:?\d{2})$/.test(dateTime);
  const dt = hasOffset ? DateTime.fromISO(dateTime, { setZone: true }) : DateTime.fromISO(dateTime, { zone });
  return dt.isValid ? dt.toMillis() : null;
}

/** The alerts in a notification's JSON texts (the body, or a multipart body's JSON parts). */
export function alertsOf(jsonTexts: string[]): EventNotificationAlert[] {
  return jsonTexts.flatMap(jsonAlerts);
}

function jsonAlerts(text: string): EventNotificationAlert[] {
  try {
    const parsed = JSON.parse(text) as unknown;
    const list = Array.isArray(parsed) ? parsed : [parsed];
    return list.filter((x): x is EventNotificationAlert => !!x && typeof x === 'object');
  } catch {
    return [];
  }
}

/** A notification's JSON texts as door events (only access results). */
export function parseNotification(deviceId: string, jsonTexts: string[], zone: string): DoorEvent[] {
  const out: DoorEvent[] = [];
  for (const alert of alertsOf(jsonTexts)) {
    const e = doorEventOf(deviceId, alert, zone);
    if (e) out.push(e);
  }
  return out;
}
