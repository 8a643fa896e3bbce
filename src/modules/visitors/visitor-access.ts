/**
 * The visitors module's answer to the devices module (`AccessSource` for subjects
 * of kind `visitor`, one per invite): while an invite is neither cancelled nor
 * withdrawn and its window is not over, licence-plate cameras (see devices'
 * `isPlateCamera`) hold its plate, when it has one, and every other device its QR
 * code's keyed tag, both limited to the window. Otherwise no device holds anything.
 *
 * The doors of rooms and desks (devices some `accessDevices` names) are the exception
 * (rules/door-pass.ts): they hold the visitor only when the invite names a booking whose
 * door window covers them, and then in the booking's window (read through `VisitorDoors`).
 */
import type { Clock } from '../../platform/clock/clock.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Db } from '../../platform/db/db.js';
import type { AccessSource, DeviceInfo, SubjectSecrets } from '../devices/index.js';
import type { SubjectState } from '../devices/rules/subject-state.js';
import { isPlateCamera } from '../devices/rules/device-kinds.js';
import type { VisitorRepository } from './visitor-repository.js';
import { passWindow, type BookingDoorWindow } from './rules/door-pass.js';

/** Port (filled with the devices module's DoorWindows): the doors of rooms and desks, and a booking's door window. */
export interface VisitorDoors {
  /** The project's devices named in some room's or desk's accessDevices. */
  doorDevices(projectId: string, trx?: Db): Promise<string[]>;
  /** The booking's door window not over by `now`, or null (no door, no window held). */
  forMeeting(meetingId: string, now: number, trx?: Db): Promise<BookingDoorWindow | null>;
}

export class VisitorAccessSource implements AccessSource {
  readonly kind = 'visitor' as const;

  constructor(private readonly deps: { repo: VisitorRepository; clock: Clock; secretBox: SecretBox; doors?: VisitorDoors }) {}

  async desired(projectId: string, inviteId: string, devices: DeviceInfo[], trx?: Db): Promise<Map<string, SubjectState>> {
    const out = new Map<string, SubjectState>();
    const invite = await this.deps.repo.invite(inviteId, trx);
    if (!invite || invite.project_id !== projectId) return out;
    const now = this.deps.clock.now();
    if (invite.cancelled_at !== null || invite.withdrawn_at !== null || now >= invite.end_at) return out;
    const doors = new Set(this.deps.doors ? await this.deps.doors.doorDevices(projectId, trx) : []);
    const booking = invite.meeting_id && this.deps.doors ? await this.deps.doors.forMeeting(invite.meeting_id, now, trx) : null;
    for (const d of devices) {
      if (d.projectId !== projectId) continue;
      const w = passWindow(d.id, doors, booking, { from: invite.start_at, until: invite.end_at });
      if (!w) continue;
      const window = { validFrom: w.from, validUntil: w.until };
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

  async secrets(projectId: string, inviteIds: readonly string[]): Promise<Map<string, SubjectSecrets>> {
    const out = new Map<string, SubjectSecrets>();
    for (const invite of await this.deps.repo.sealedCodes(projectId, inviteIds)) {
      out.set(invite.id, { face: null, qrCode: this.deps.secretBox.open(invite.qr_enc) });
    }
    return out;
  }
}
