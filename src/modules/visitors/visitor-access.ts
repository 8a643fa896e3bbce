/**
 * The visitors module's answer to the devices module (`AccessSource` for subjects
 * of kind `visitor`, one per invite): while an invite is neither cancelled nor
 * withdrawn and its window is not over, licence-plate cameras (see devices'
 * `isPlateCamera`) hold its plate, when it has one, and every other device its QR
 * code's keyed tag, both limited to the window. Otherwise no device holds anything.
 */
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Db } from '../../platform/db/db.js';
import type { AccessSource, DeviceInfo, SubjectSecrets } from '../devices/index.js';
import type { SubjectState } from '../devices/rules/subject-state.js';
import { isPlateCamera } from '../devices/rules/device-kinds.js';
import type { VisitorRepository } from './visitor-repository.js';

export class VisitorAccessSource implements AccessSource {
  readonly kind = 'visitor' as const;

  constructor(private readonly deps: { repo: VisitorRepository; clock: Clock; secretBox: SecretBox }) {}

  async desired(projectId: string, inviteId: string, devices: DeviceInfo[], trx?: Db): Promise<Map<string, SubjectState>> {
    const out = new Map<string, SubjectState>();
    const invite = await this.deps.repo.invite(inviteId, trx);
    if (!invite || invite.project_id !== projectId) return out;
    if (invite.cancelled_at !== null || invite.withdrawn_at !== null || this.deps.clock.now() >= invite.end_at) return out;
    const window = { validFrom: invite.start_at, validUntil: invite.end_at };
    for (const d of devices) {
      if (d.projectId !== projectId) continue;
      if (isPlateCamera(d.kind)) {
        if (invite.plate_key) out.set(d.id, { cards: [], face: null, qr: null, plates: [invite.plate_key], ...window });
      } else {
        out.set(d.id, { cards: [], face: null, qr: invite.qr_tag, plates: [], ...window });
      }
    }
    return out;
  }

  subjects(projectId: string, trx?: Db): Promise<string[]> {
    return this.deps.repo.unwithdrawn(projectId, trx);
  }

  async secrets(projectId: string, inviteId: string): Promise<SubjectSecrets> {
    const invite = await this.deps.repo.invite(inviteId);
    if (!invite || invite.project_id !== projectId) return { face: null, qrCode: null };
    return { face: null, qrCode: this.deps.secretBox.open(invite.qr_enc) };
  }
}
