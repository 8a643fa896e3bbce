/**
 * Whether what a vendor device reports holding for a subject (its card numbers, whether it has a face,
 * its validity window to the second) is the state the service sent it (pure). Vendor devices keep no
 * state hash of ours, so an inventory read back from them is compared field by field.
 */
import { encodeCard, fitsFormat, type CardCodeFormat } from '../../members/rules/card-codec.js';
import type { SubjectState } from './subject-state.js';

/**
 * What a device holds for one subject as it can tell: vendor devices keep no state hash of ours, so
 * they report what they store (card numbers in the device's format, whether a face is enrolled, the
 * validity window to the second) and the service compares that with what it sent.
 */
export interface ObservedEntry {
  cardNos: string[];
  face: boolean;
  validFrom: number | null;
  validUntil: number | null;
}

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

/** The card numbers a device in `format` holds for `state` (cards that cannot be written in it are left out). */
export function expectedCardNos(state: SubjectState, format: string): string[] {
  return state.cards
    .filter((uid) => fitsFormat(uid, format as CardCodeFormat))
    .map((uid) => encodeCard(uid, format as CardCodeFormat))
    .sort();
}

export function observedMatches(state: SubjectState, observed: ObservedEntry, format: string): boolean {
  const cards = [...new Set(observed.cardNos)].sort();
  const want = expectedCardNos(state, format);
  return (
    cards.length === want.length &&
    cards.every((c, i) => c === want[i]) &&
    observed.face === (state.face !== null) &&
    seconds(observed.validFrom) === seconds(state.validFrom) &&
    seconds(observed.validUntil) === seconds(state.validUntil)
  );
}
