/**
 * Who the caller is to a booking: organizer, attendee, project admin, the app
 * that booked it — and what that lets them see. Pure functions of the principal
 * and the stored meeting.
 */
import { hasPermission, type Principal } from '../auth/index.js';
import type { Caller } from './rules/meeting-rules.js';
import type { MeetingRow } from './meeting-repository.js';

export const MEETING_UPDATE = 'MEETING_UPDATE';

/** The user the principal acts as: the member of a delegated token, or the app's service user. */
export function actingUserId(p: Principal, appServiceUserId: string | null): string | null {
  return p.kind === 'member' ? p.userId : appServiceUserId;
}

export function isOrganizer(p: Principal, m: MeetingRow, appServiceUserId: string | null): boolean {
  return actingUserId(p, appServiceUserId) === m.organizer_user_id;
}

export function isAttendee(p: Principal, m: MeetingRow): boolean {
  return p.kind === 'member' && m.attendees.some((a) => a.userId !== null && a.userId === p.userId);
}

/** Project admin, or an app (or admin acting through one) holding MEETING_UPDATE on the project. */
export function isProjectAdmin(p: Principal, m: MeetingRow): boolean {
  return hasPermission(p, m.project_id, MEETING_UPDATE);
}

/** May the caller see this booking at all? */
export function canSee(p: Principal, m: MeetingRow, appServiceUserId: string | null): boolean {
  if (!p.projects.has(m.project_id)) return false;
  if (p.kind === 'app') return true;
  return isOrganizer(p, m, appServiceUserId) || isAttendee(p, m) || isProjectAdmin(p, m);
}

/** The PIN is shown to the organizer, the app that made the booking (its own token), and project admins. */
export function mayReadPin(p: Principal, m: MeetingRow, appServiceUserId: string | null): boolean {
  return isOrganizer(p, m, appServiceUserId) || (p.kind === 'app' && p.appId === m.app_id) || isProjectAdmin(p, m);
}

export function callerOf(p: Principal, m: MeetingRow, appServiceUserId: string | null, pinMatches?: boolean): Caller {
  return {
    isOrganizer: isOrganizer(p, m, appServiceUserId),
    isAttendee: isAttendee(p, m),
    isProjectAdmin: isProjectAdmin(p, m),
    pinMatches,
  };
}

/** History attribution: who acted and through which channel. */
export function actor(p: Principal, appServiceUserId: string | null): { by: string; source: 'user' | 'partner'; sourceDetail: string } {
  return p.kind === 'member'
    ? { by: p.userId!, source: 'user', sourceDetail: p.clientId }
    : { by: appServiceUserId ?? p.clientId, source: 'partner', sourceDetail: p.clientId };
}
