/**
 * The members module's answer to the devices module (its `AccessSource`): an
 * active member holds, on every device of the access groups they are in, their
 * active cards (physical and virtual) and, where the device takes faces, their
 * face (the picture derived for the device's kind). A member with nothing to hold
 * on a device (no card, no face it takes) has no entry there. Face bytes leave the module only inside a command sent to a device.
 *
 * Besides, a booking's participants hold the same credential set on the doors of the booked
 * room or desk within the booking's window (`validFrom`/`validUntil`, read through the
 * `DoorWindowsReader` port). Group access wins: a device held permanently carries no window.
 */
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Db } from '../../platform/db/db.js';
import type { AccessSource, DeviceInfo, SubjectSecrets } from '../devices/index.js';
import { faceLimitsFor } from '../devices/rules/face-limits.js';
import type { SubjectState } from '../devices/rules/subject-state.js';
import { windowToSet, type AccessWindow } from '../devices/rules/door-window.js';
import type { CredentialRepository } from './credential-repository.js';
import type { FaceVariants } from './face-variants.js';
import type { MembersRepository } from './members-repository.js';

/** Port (filled with the devices module's DoorWindows): the door windows booking participants hold. */
export interface DoorWindowsReader {
  /** The user's windows in the project not over by `now`. */
  forUser(projectId: string, userId: string, now: number, trx?: Db): Promise<{ deviceIds: string[]; from: number; until: number }[]>;
  /** Users of the project with a stored window. */
  usersWithWindows(projectId: string, trx?: Db): Promise<string[]>;
}

/** Per device, the window to set now of the windows a user holds there. */
function windowsByDevice(held: { deviceIds: string[]; from: number; until: number }[], now: number): Map<string, AccessWindow> {
  const all = new Map<string, AccessWindow[]>();
  for (const h of held) for (const id of h.deviceIds) all.set(id, [...(all.get(id) ?? []), { from: h.from, until: h.until }]);
  const out = new Map<string, AccessWindow>();
  for (const [id, ws] of all) {
    const w = windowToSet(ws, now);
    if (w) out.set(id, w);
  }
  return out;
}

export class MemberAccessSource implements AccessSource {
  readonly kind = 'member' as const;

  constructor(
    private readonly members: MembersRepository,
    private readonly credentials: CredentialRepository,
    private readonly secretBox: SecretBox,
    private readonly faces: FaceVariants,
    private readonly windows: DoorWindowsReader | null = null,
    private readonly now: () => number = () => 0,
  ) {}

  async desired(projectId: string, userId: string, devices: DeviceInfo[], trx?: Db): Promise<Map<string, SubjectState>> {
    const out = new Map<string, SubjectState>();
    const membership = await this.members.membership(userId, projectId, trx);
    if (membership?.status !== 'active') return out;
    const groups = new Set(await this.members.memberGroupIds(userId, projectId, trx));
    const now = this.now();
    const held = this.windows
      ? windowsByDevice(await this.windows.forUser(projectId, userId, now, trx), now)
      : new Map<string, AccessWindow>();
    const mine = devices.filter((d) => groups.has(d.accessGroupId) || held.has(d.id));
    if (!mine.length) return out;
    const [cards, face, variants] = await Promise.all([
      this.credentials.activeCards(projectId, userId, trx),
      this.credentials.faceDigest(projectId, userId, trx),
      this.credentials.variantDigests(projectId, userId, trx),
    ]);
    for (const d of mine) {
      // Group access wins: a device the member holds permanently keeps no window.
      const window: AccessWindow | null = groups.has(d.accessGroupId) ? null : (held.get(d.id) ?? null);
      // The picture derived for the device's kind from the current original; a refusal keeps the face off, never the cards.
      // No picture yet (a face stored before its profile existed) holds no face until the next reconcile derives it.
      const limits = faceLimitsFor(d.kind);
      const variant = limits && face ? variants.find((v) => v.profile === limits.profile && v.source_sha256 === face) : undefined;
      // Nothing to hold (no card, no face this device takes): no entry, so a member whose last credential goes leaves the device.
      if (!cards.length && !variant?.sha256) continue;
      out.set(d.id, {
        cards: cards.map((c) => c.uid),
        face: variant?.sha256 ?? null,
        faceRefused: variant?.refused ?? null,
        qr: null,
        plates: [],
        validFrom: window?.from ?? null,
        validUntil: window?.until ?? null,
      });
    }
    return out;
  }

  async subjects(projectId: string, trx?: Db): Promise<string[]> {
    const grouped = await this.members.groupedMembers(projectId, trx);
    if (!this.windows) return grouped;
    const booked = await this.windows.usersWithWindows(projectId, trx);
    return [...new Set([...grouped, ...booked])];
  }

  async secrets(projectId: string, userIds: readonly string[], device: DeviceInfo): Promise<Map<string, SubjectSecrets>> {
    const out = new Map<string, SubjectSecrets>();
    const limits = faceLimitsFor(device.kind);
    if (!limits || !userIds.length) return out;
    for (const face of await this.credentials.sealedVariants(projectId, userIds, limits.profile)) {
      if (!face.image_enc || !face.sha256) continue;
      const bytes = Buffer.from(this.secretBox.open(face.image_enc), 'base64');
      out.set(face.user_id, { face: { mime: face.mime ?? 'image/jpeg', sha256: face.sha256, bytes }, qrCode: null });
    }
    return out;
  }

  async prepare(projectId: string): Promise<void> {
    await this.faces.prepare(projectId);
  }
}
