/**
 * ZKTeco PUSH (ADMS): the terminal polls the service (zkteco-service.ts answers), so this transport never
 * delivers; it only records, durably in the device's pull cursor, that the device must be asked for its
 * user list at its next poll (any instance may serve that poll).
 */
import type { DeliveryReport, DeviceTarget, DeviceTransport, TransportEvents } from '../transport.js';
import type { DeviceRepository } from '../device-repository.js';
import { askInventory, readCursor, type CursorLocks } from './zkteco-cursor.js';

export class ZktecoTransport implements DeviceTransport {
  readonly name = 'zkteco-push' as const;
  readonly pull = true;

  constructor(
    private readonly repo: DeviceRepository,
    private readonly now: () => number,
    private readonly locks: CursorLocks,
  ) {}

  async start(_events: TransportEvents): Promise<void> {}

  async stop(): Promise<void> {}

  deliver(): Promise<DeliveryReport> {
    return Promise.resolve({ answered: [], stopped: { kind: 'temporary', message: 'the device fetches its commands' } });
  }

  async requestInventory(targets: DeviceTarget[]): Promise<number> {
    for (const t of targets) {
      await this.repo.ensureStates([t.id], this.now());
      await this.locks.run(t.id, async () => {
        const cursor = readCursor(await this.repo.pullCursor(t.id));
        askInventory(cursor);
        await this.repo.setPullCursor(t.id, JSON.stringify(cursor));
      });
    }
    return 0;
  }
}
