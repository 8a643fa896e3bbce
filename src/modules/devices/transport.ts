/**
 * How changes reach devices: one port, two transports. `sandbox` simulates the
 * devices inside the service; `mqtt` talks to a building gateway over an MQTT
 * broker (docs/devices.md gives the topics and payloads).
 *
 * The sync job hands a transport a device's next commands in sequence order; the
 * transport answers with what the device acknowledged, in order, and stops at the
 * first command the device could not take for a passing reason (offline,
 * temporary). A command refused for bad input is reported and the next one goes on.
 */
import type { WireCommand } from '../../contract/device-wire.js';
import type { SubjectKind } from './rules/subject-state.js';

export type { FailureKind, WireAck, WireCommand } from '../../contract/device-wire.js';

/** The device a delivery is for. */
export interface DeviceTarget {
  id: string;
  kind: string;
  /** The sandbox reachability switch (sandbox transport only). */
  online: boolean;
}

export interface DeliveryReport {
  /** Commands the device answered, in order: applied, or refused for bad input. */
  answered: { seq: number; ok: boolean; message?: string }[];
  /** Set when delivery stopped before every command was answered. */
  stopped?: { kind: 'offline' | 'temporary'; message: string };
}

/** What a device (or its gateway) reports unprompted. */
export interface TransportEvents {
  /** The device became reachable or unreachable. */
  reachability(deviceId: string, online: boolean): void;
  /** The device's full memory: subject and state hash per enrolled subject, and the last sequence it applied. Resolves to the commands it queued. */
  inventory(deviceId: string, report: InventoryReport): Promise<number>;
  /** The gateway came online, or restarted (maybe without its memory): ask for every inventory. */
  gatewayOnline(): void;
}

export interface InventoryReport {
  lastSeq: number;
  holds: { subject: { kind: SubjectKind; id: string }; stateHash: string }[];
}

export interface DeviceTransport {
  readonly name: 'sandbox' | 'mqtt';
  /** Connects (mqtt) and starts reporting events. */
  start(events: TransportEvents): Promise<void>;
  stop(): Promise<void>;
  /** Sends the commands in order and reports the answers (see the module comment). */
  deliver(device: DeviceTarget, commands: WireCommand[]): Promise<DeliveryReport>;
  /**
   * Asks these devices what they hold; each answer arrives as an `inventory` event.
   * Resolves to the commands queued by answers that arrived before it returns (the
   * sandbox answers at once; over MQTT they come later, and it resolves to 0).
   */
  requestInventory(deviceIds: string[]): Promise<number>;
}
