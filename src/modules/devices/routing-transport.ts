/**
 * One transport per device: a device whose site entry names a `transport` is spoken to in its
 * vendor's protocol (`isapi`, `zkteco-push`); every other device goes through the building-wide
 * default DEVICE_TRANSPORT names (`sandbox` or `mqtt`). Events of every transport reach the same sink.
 */
import type { DeliveryReport, DeviceTarget, DeviceTransport, TransportEvents, WireCommand } from './transport.js';

export class RoutingTransport implements DeviceTransport {
  /** The building-wide default's name (what the device view reports). */
  readonly name: 'sandbox' | 'mqtt';

  constructor(
    private readonly fallback: DeviceTransport & { readonly name: 'sandbox' | 'mqtt' },
    private readonly vendors: ReadonlyMap<string, DeviceTransport>,
  ) {
    this.name = fallback.name;
  }

  /** The transport that speaks to `device`. */
  of(device: Pick<DeviceTarget, 'connection'>): DeviceTransport {
    return (device.connection && this.vendors.get(device.connection.kind)) ?? this.fallback;
  }

  async start(events: TransportEvents): Promise<void> {
    await this.fallback.start(events);
    for (const t of this.vendors.values()) await t.start(events);
  }

  async stop(): Promise<void> {
    for (const t of this.vendors.values()) await t.stop();
    await this.fallback.stop();
  }

  deliver(device: DeviceTarget, commands: WireCommand[]): Promise<DeliveryReport> {
    return this.of(device).deliver(device, commands);
  }

  async requestInventory(devices: DeviceTarget[]): Promise<number> {
    const groups = new Map<DeviceTransport, DeviceTarget[]>();
    for (const d of devices) {
      const t = this.of(d);
      groups.set(t, [...(groups.get(t) ?? []), d]);
    }
    let queued = 0;
    for (const [t, list] of groups) queued += await t.requestInventory(list);
    return queued;
  }
}
