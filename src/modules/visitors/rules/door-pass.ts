/**
 * Which window a visitor's pass has on a device (pure). A device that is some room's or
 * desk's door (named in an `accessDevices` of the project) holds a visitor only when the
 * invite names a booking whose current door window covers that device, and then in the
 * booking's window; any other device holds the visitor in the invite's own window.
 */

/** A validity window (epoch ms): from `from` (inclusive) until `until` (exclusive). */
export interface PassWindow {
  from: number;
  until: number;
}

/** The door window of the booking an invite names, as the devices module keeps it. */
export interface BookingDoorWindow {
  deviceIds: readonly string[];
  from: number;
  until: number;
}

/**
 * The window device `deviceId` holds the visitor's pass in, or null for none. `doors`: the
 * project's door devices; `booking`: the named booking's door window not over by now (null when
 * the invite names none, or the booking holds no window now); `invite`: the invite's window.
 */
export function passWindow(
  deviceId: string,
  doors: ReadonlySet<string>,
  booking: BookingDoorWindow | null,
  invite: PassWindow,
): PassWindow | null {
  if (!doors.has(deviceId)) return invite;
  if (!booking || !booking.deviceIds.includes(deviceId) || !(booking.until > booking.from)) return null;
  return { from: booking.from, until: booking.until };
}

/** A booking as an invite naming it is checked against. */
export interface InvitedBooking {
  projectId: string;
  status: string;
  organizerUserId: string;
  attendeeUserIds: readonly string[];
}

/** Booking statuses an invite may name: those that hold (or, once paid, will hold) a door window. */
export const INVITABLE_BOOKING_STATUSES: readonly string[] = ['active', 'checked-in', 'unpaid'];

/** Why an invite of `projectId` by `hostUserId` may not name `booking` (undefined: not found), or null when it may. */
export function invitedBookingProblem(booking: InvitedBooking | undefined, projectId: string, hostUserId: string): string | null {
  if (!booking || booking.projectId !== projectId) return 'body.meetingId must name a booking of the project';
  if (booking.organizerUserId !== hostUserId && !booking.attendeeUserIds.includes(hostUserId))
    return 'body.meetingId must name a booking the host organizes or attends';
  if (!INVITABLE_BOOKING_STATUSES.includes(booking.status))
    return `body.meetingId names a booking that is ${booking.status}: only an active, checked-in or unpaid booking may be named`;
  return null;
}

/**
 * A scan now at a device whose pass window there is `window` (from passWindow; null: the device holds no pass
 * for the invite): null when the window holds `now`, else the refusal a scan answers. Only a room's or desk's
 * door can have a window other than the invite's own.
 */
export function doorScanRefusal(window: PassWindow | null, now: number): 'unknown' | 'not-yet-valid' | 'expired' | null {
  if (!window) return 'unknown';
  if (now < window.from) return 'not-yet-valid';
  if (now >= window.until) return 'expired';
  return null;
}
