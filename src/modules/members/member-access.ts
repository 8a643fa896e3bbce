/**
 * The members module's answer to the devices module (its `AccessSource`): an
 * active member holds, on every device of the access groups they are in, their
 * active cards (physical and virtual) and, where the device takes faces, their
 * face (the picture derived for the device's kind). A member with nothing to hold
 * on a device (no card, no face it takes) has no entry there. Face bytes leave the module only inside a command sent to a device.
 */
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Db } from '../../platform/db/db.js';
import type { AccessSource, DeviceInfo, SubjectSecrets } from '../devices/index.js';
import { faceLimitsFor } from '../devices/rules/face-limits.js';
import type { SubjectState } from '../devices/rules/subject-state.js';
import type { CredentialRepository } from './credential-repository.js';
import type { FaceVariants } from './face-variants.js';
import type { MembersRepository } from './members-repository.js';

export class MemberAccessSource implements AccessSource {
  readonly kind = 'member' as const;

  constructor(
    private readonly members: MembersRepository,
    private readonly credentials: CredentialRepository,
    private readonly secretBox: SecretBox,
    private readonly faces: FaceVariants,
  ) {}

  async desired(projectId: string, userId: string, devices: DeviceInfo[], trx?: Db): Promise<Map<string, SubjectState>> {
    const out = new Map<string, SubjectState>();
    const membership = await this.members.membership(userId, projectId, trx);
    if (membership?.status !== 'active') return out;
    const groups = new Set(await this.members.memberGroupIds(userId, projectId, trx));
    const mine = devices.filter((d) => groups.has(d.accessGroupId));
    if (!mine.length) return out;
    const [cards, face, variants] = await Promise.all([
      this.credentials.activeCards(projectId, userId, trx),
      this.credentials.faceDigest(projectId, userId, trx),
      this.credentials.variantDigests(projectId, userId, trx),
    ]);
    for (const d of mine) {
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
        validFrom: null,
        validUntil: null,
      });
    }
    return out;
  }

  subjects(projectId: string, trx?: Db): Promise<string[]> {
    return this.members.groupedMembers(projectId, trx);
  }

  async secrets(projectId: string, userId: string, device: DeviceInfo): Promise<SubjectSecrets> {
    const limits = faceLimitsFor(device.kind);
    const face = limits ? await this.credentials.sealedVariant(projectId, userId, limits.profile) : undefined;
    return {
      face:
        face?.image_enc && face.sha256
          ? { mime: face.mime ?? 'image/jpeg', sha256: face.sha256, bytes: Buffer.from(this.secretBox.open(face.image_enc), 'base64') }
          : null,
      qrCode: null,
    };
  }

  async prepare(projectId: string): Promise<void> {
    await this.faces.prepare(projectId);
  }
}
