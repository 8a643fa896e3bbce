/**
 * The entry log's pure decisions: which asset an entry names, the outcome it is stored with,
 * and the time the booking rules judge it at.
 */

/** What an entry did: `pending` until the door-entries job asked the booking module. */
export type EntryOutcome = 'pending' | 'check-in' | 'booked' | 'walk-in' | 'recorded' | 'refused';

export const ENTRY_OUTCOMES: readonly EntryOutcome[] = ['pending', 'check-in', 'booked', 'walk-in', 'recorded', 'refused'];

export type EntrySubjectKind = 'member' | 'visitor' | 'unknown';

export interface EntryAsset {
  kind: 'room' | 'desk';
  id: string;
}

/**
 * The one asset an entry names: a device may be the door of several rooms and desks; an entry names
 * one, rooms before desks, each kind by its id (smallest first), so the same device always names the same.
 */
export function entryAsset(rooms: readonly string[], desks: readonly string[]): EntryAsset | null {
  const room = [...rooms].sort()[0];
  if (room !== undefined) return { kind: 'room', id: room };
  const desk = [...desks].sort()[0];
  return desk !== undefined ? { kind: 'desk', id: desk } : null;
}

/** The outcome an entry is stored with: refused when not granted; pending for a granted member at an asset; recorded otherwise. */
export function initialOutcome(e: { granted: boolean; subjectKind: EntrySubjectKind; asset: EntryAsset | null }): EntryOutcome {
  if (!e.granted) return 'refused';
  return e.subjectKind === 'member' && e.asset ? 'pending' : 'recorded';
}

/**
 * The time of an entry for the booking rules: the device's time shifted into service time
 * (`offsetMs` = service time − real time, the sandbox clock's offset), never later than its receipt
 * (in service time): a device whose clock runs ahead cannot check a booking in early.
 */
export function effectiveAt(deviceAt: number, receivedAt: number, offsetMs: number): number {
  return Math.min(deviceAt, receivedAt) + offsetMs;
}
