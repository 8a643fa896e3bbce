/**
 * The `data` of visitor events (api-spec "Event catalog", visitor rows). `userId`
 * is the host. Only VMS_INVITE_SENT carries the QR card code.
 */
import type { VmsHostCancelledData, VmsInviteSentData, VmsVisitorCheckedInData } from '../../contract/events.js';
import type { VisitorEntry } from '../../contract/visitors.js';
import { displayBoth, displayEn, ENTRY_TYPE_LABELS } from './rules/display.js';
import type { InviteRow } from './visitor-repository.js';

export const VMS_INVITE_SENT = 'VMS_INVITE_SENT';
export const VMS_VISITOR_CHECKED_IN = 'VMS_VISITOR_CHECKED_IN';
export const VMS_HOST_CANCELLED = 'VMS_HOST_CANCELLED';

const iso = (ms: number) => new Date(ms).toISOString();

export interface Host {
  id: string;
  name: string;
  email: string | null;
}

function base(invite: InviteRow, at: number) {
  return { projectId: invite.project_id, userId: invite.host_user_id, timestamp: iso(at) };
}

/** The end as displayed: null when the invite was made without an end (valid the whole start day). */
const endDisplay = (invite: InviteRow, zone: string) => (invite.end_given ? displayEn(invite.end_at, zone) : null);

export function inviteSentData(invite: InviteRow, host: Host, qrCardCode: string, zone: string, at: number): VmsInviteSentData {
  return {
    ...base(invite, at),
    visitorName: invite.visitor_name,
    visitorEmail: invite.visitor_email,
    hostName: host.name,
    hostEmail: host.email,
    visitDate: iso(invite.start_at),
    startDateTime: displayEn(invite.start_at, zone),
    endDateTime: endDisplay(invite, zone),
    qrCardCode,
    ...(invite.license_plate !== null ? { licensePlate: invite.license_plate } : {}),
    ...(invite.visit_purpose !== null ? { visitPurpose: invite.visit_purpose } : {}),
  };
}

export function hostCancelledData(invite: InviteRow, host: Host, zone: string, at: number): VmsHostCancelledData {
  return {
    ...base(invite, at),
    visitorName: invite.visitor_name,
    hostName: host.name,
    hostEmail: host.email,
    startDateTime: displayEn(invite.start_at, zone),
    endDateTime: endDisplay(invite, zone),
    ...(invite.license_plate !== null ? { licensePlate: invite.license_plate } : {}),
  };
}

export interface CheckIn {
  entryType: VisitorEntry['entryType'];
  /** The host's unit, or the project's name when the host has none. */
  hostAssetTitle: string;
  /** The device's location, or its name in both languages when it has none. */
  location: { en: string; th: string };
}

export function checkedInData(invite: InviteRow, c: CheckIn, zone: string, at: number): VmsVisitorCheckedInData {
  return {
    ...base(invite, at),
    visitorName: invite.visitor_name,
    hostAssetTitle: c.hostAssetTitle,
    checkInTime: displayBoth(at, zone),
    vmsEntryType: { ...ENTRY_TYPE_LABELS[c.entryType] },
    licensePlateNumber: c.entryType === 'license-plate' ? (invite.license_plate ?? '') : '',
    location: { entryType: c.entryType, en: c.location.en, th: c.location.th },
  };
}
