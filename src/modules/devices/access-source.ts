/**
 * Where the devices module learns what a subject may hold. The members module
 * answers for partner members and the visitors module for visitor invites; the
 * composition root plugs them in. Each answers with the subject's state for a
 * device, and gives the secrets (face bytes, QR code) only when a command is sent.
 */
import type { Db } from '../../platform/db/db.js';
import type { SubjectKind, SubjectState } from './rules/subject-state.js';

/** A device as the sources see it. */
export interface DeviceInfo {
  id: string;
  projectId: string;
  accessGroupId: string;
  kind: string;
}

export interface SubjectSecrets {
  face: { mime: string; sha256: string; bytes: Buffer } | null;
  qrCode: string | null;
}

export interface AccessSource {
  readonly kind: SubjectKind;
  /**
   * The state each of `devices` (all of the project's devices) must hold for the
   * subject; a device left out of the map must hold nothing for it.
   */
  desired(projectId: string, subjectId: string, devices: DeviceInfo[], trx?: Db): Promise<Map<string, SubjectState>>;
  /** Every subject of the project with anything to hold on some device (reconcile). */
  subjects(projectId: string, trx?: Db): Promise<string[]>;
  /**
   * The secrets commands for these subjects to `device` carry (the face as that kind of device takes it), read
   * together (a delivery round asks once for all its commands); a subject left out of the map has none.
   */
  secrets(projectId: string, subjectIds: readonly string[], device: DeviceInfo): Promise<Map<string, SubjectSecrets>>;
  /** Optional work before a reconcile plans the project (outside any transaction): e.g. deriving missing face pictures. */
  prepare?(projectId: string): Promise<void>;
}

/** What the members and visitors modules call in their own transaction when a subject's access changes. */
export interface AccessChangeLog {
  record(trx: Db, change: { projectId: string; subject: { kind: SubjectKind; id: string }; reason: string; at: number }): Promise<void>;
  /** Call after the transaction that recorded changes commits: delivery starts at once. */
  poke(): void;
}

export type { SubjectState };
