/**
 * The sandbox transport: devices simulated inside the service. A device answers at
 * once unless an operator switched it offline (`POST /ops/v1/devices/{id}/offline`);
 * it refuses bad input by the same rule as the reference gateway. What a sandbox
 * device holds is what it acknowledged (device_enrollments), so it survives restarts;
 * asked for its inventory, a reachable device reports that, as a gateway would.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { checkCommand } from './rules/device-command-check.js';
import type { SubjectKind, SubjectState } from './rules/subject-state.js';
import { stateHash } from './state-hash.js';
import type { DeliveryReport, DeviceTarget, DeviceTransport, TransportEvents, WireCommand } from './transport.js';

/** A sandbox device's memory: its entries with the seq that wrote each, or null while it is switched offline. */
export type SandboxMemory = (
  deviceId: string,
) => Promise<{ subject_kind: string; subject_id: string; state: SubjectState; seq: number }[] | null>;

export class SandboxTransport implements DeviceTransport {
  readonly name = 'sandbox' as const;
  private events: TransportEvents | null = null;

  constructor(private readonly memory?: SandboxMemory) {}

  async start(events: TransportEvents): Promise<void> {
    this.events = events;
  }

  async stop(): Promise<void> {
    this.events = null;
  }

  async deliver(device: DeviceTarget, commands: WireCommand[]): Promise<DeliveryReport> {
    if (!device.online) return { answered: [], stopped: { kind: 'offline', message: 'the device is switched offline' } };
    return {
      answered: commands.map((c) => {
        const check = checkCommand(c, device.kind);
        return check.ok ? { seq: c.seq, ok: true } : { seq: c.seq, ok: false, message: check.message };
      }),
    };
  }

  async requestInventory(devices: DeviceTarget[]): Promise<number> {
    const deviceIds = devices.map((d) => d.id);
    const events = this.events;
    if (!events || !this.memory) return 0;
    let queued = 0;
    for (const id of deviceIds) {
      const held = await this.memory(id);
      await nextTurn(); // requests run between devices (SQLite statements do not yield)
      if (!held) continue; // switched offline: it does not answer
      queued += await events.inventory(id, {
        lastSeq: held.reduce((m, h) => Math.max(m, h.seq), 0),
        holds: held.map((h) => ({ subject: { kind: h.subject_kind as SubjectKind, id: h.subject_id }, stateHash: stateHash(h.state) })),
      });
    }
    return queued;
  }
}
