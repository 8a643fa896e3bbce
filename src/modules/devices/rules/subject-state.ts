/**
 * What one device holds for one subject (pure). A subject is a partner member or a
 * visitor invite; its state on a device is its whole credential set there, so a
 * newer command for the same subject supersedes an older one. Secrets are not in
 * a state: a face is named by its SHA-256 and a visitor's QR code by its keyed
 * tag; the bytes and the code travel only inside the command sent to the device.
 */

export type SubjectKind = 'member' | 'visitor';

export interface SubjectRef {
  kind: SubjectKind;
  id: string;
}

export interface SubjectState {
  /** Decoded card UIDs (8 uppercase hex digits), sorted. */
  cards: string[];
  /** SHA-256 (hex) of the face picture the device takes (derived for its kind), or null. */
  face: string | null;
  /** Why the member's face cannot go to this device (no picture within its limits); absent otherwise. The cards still go. */
  faceRefused?: string | null;
  /** Keyed tag of a visitor's QR card code, or null. */
  qr: string | null;
  /** Licence plates, normalized (see visitors' plate rule), sorted. */
  plates: string[];
  /** Validity window (epoch ms), or null for always. */
  validFrom: number | null;
  validUntil: number | null;
}

export const EMPTY_STATE: SubjectState = { cards: [], face: null, qr: null, plates: [], validFrom: null, validUntil: null };

/** A canonical form: equal states serialize equally. */
export function canonicalState(s: SubjectState): SubjectState {
  return {
    cards: [...new Set(s.cards)].sort(),
    face: s.face,
    // Only when set, so states without a refusal serialize (and hash) as they always did.
    ...(s.faceRefused ? { faceRefused: s.faceRefused } : {}),
    qr: s.qr,
    plates: [...new Set(s.plates)].sort(),
    validFrom: s.validFrom,
    validUntil: s.validUntil,
  };
}

export function stateJson(s: SubjectState): string {
  return JSON.stringify(canonicalState(s));
}

export function parseState(json: string): SubjectState {
  return canonicalState({ ...EMPTY_STATE, ...(JSON.parse(json) as Partial<SubjectState>) });
}

/** Whether two states are the same credential set (missing ones are never the same). */
export function sameState(a: SubjectState | null | undefined, b: SubjectState | null | undefined): boolean {
  return !!a && !!b && stateJson(a) === stateJson(b);
}

export function subjectKey(s: SubjectRef): string {
  return `${s.kind}:${s.id}`;
}
