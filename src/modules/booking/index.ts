/**
 * The booking module's front door (minimal: the names calendar sync uses; the booking helper's
 * index.ts is the full one and replaces this file at merge).
 */
export { BookingChanges, scopeOf } from './booking-changes.js';
export type { FeedBooking } from './booking-changes.js';
export type { MeetingRow } from './meeting-repository.js';
export { newPinCode } from './booking-change.js';
export type { Actor, BookingChange, BookingScope, HistoryEntry, NewBooking, Window } from './booking-change.js';
export { parseOrganizer, parseRecurrence, withoutOccurrence } from './meeting-view.js';
export type { StoredAttendee } from './meeting-view.js';
