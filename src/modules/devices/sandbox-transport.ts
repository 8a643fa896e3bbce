/**
 * The sandbox transport: devices simulated inside the service. A device answers at
 * once unless an operator switched it offline (`POST /ops/v1/devices/{id}/offline`);
 * it refuses bad input by the same rule as the reference gateway. What a sandbox
 * device holds is what it acknowledged (device_enrollments), so it survives restarts.
 */
import { checkCommand } from './rules/device-command-check.js';
import type { DeliveryReport, DeviceTarget, DeviceTransport, WireCommand } from './transport.js';

export class SandboxTransport implements DeviceTransport {
  readonly name = 'sandbox' as const;

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  async deliver(device: DeviceTarget, commands: WireCommand[]): Promise<DeliveryReport> {
    if (!device.online) return { answered: [], stopped: { kind: 'offline', message: 'the device is switched offline' } };
    return {
      answered: commands.map((c) => {
        const check = checkCommand(c, device.kind);
        return check.ok ? { seq: c.seq, ok: true } : { seq: c.seq, ok: false, message: check.message };
      }),
    };
  }
}
