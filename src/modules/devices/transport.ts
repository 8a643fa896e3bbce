/**
 * How changes reach devices: one port, several transports. `sandbox` simulates the
 * devices inside the service; `mqtt` talks to a building gateway over an MQTT
 * broker (docs/devices.md gives the topics and payloads); a device whose site entry
 * names a `transport` is spoken to directly in its vendor's protocol: `isapi`
 * (HikVision: the service is the HTTP client) or `zkteco-push` (ZKTeco: the device
 * polls the service). `RoutingTransport` picks one per device.
 *
 * The sync job hands a transport a device's next commands in sequence order; the
 * transport answers with what the device acknowledged, in order, and stops at the
 * first command the device could not take for a passing reason (offline,
 * temporary). A command refused for bad input is reported and the next one goes on.
 */
import type { WireCommand } from '../../contract/device-wire.js';
import type { SubjectKind } from './rules/subject-state.js';
import type { ObservedEntry } from './rules/observed-state.js';

export type { ObservedEntry };

export type { FailureKind, WireAck, WireCommand } from '../../contract/device-wire.js';

/** How a device is reached when its site entry names a transport (secrets opened). */
export type DeviceConnection =
  | { kind: 'isapi'; baseUrl: string; username: string; password: string }
  | { kind: 'zkteco-push'; serialNumber: string; commKey: string | null };

/** The device a delivery is for. */
export interface DeviceTarget {
  id: string;
  kind: string;
  /** The sandbox reachability switch (sandbox transport only). */
  online: boolean;
  /** The property's IANA time zone: devices that keep local time get validity windows in it. */
  timeZone: string;
  /** Its own transport, or null for the building-wide default (DEVICE_TRANSPORT). */
  connection: DeviceConnection | null;
}

/** How a credential was presented at a door. */
export type CredentialKind = 'card' | 'face' | 'qr' | 'plate' | 'pin' | 'fingerprint' | 'other';

/** One access event as a device reported it (granted or refused). */
export interface DoorEvent {
  deviceId: string;
  /** The device's own identity of this event (serial number, log line): a device that resends sends the same. */
  eventKey: string;
  /** The device's time of the event (epoch ms). */
  at: number;
  granted: boolean;
  credentialKind: CredentialKind;
  /** The subject when the device names one the service enrolled (employeeNo, PIN, subject id), else null. */
  subject: { kind: SubjectKind; id: string } | null;
  /** The card number as read, in the device's card format, when the device gives one (never stored in clear). */
  cardNo?: string | null;
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
  /** A door event: recorded in the entry log (duplicates recognised), then acted on. */
  access(event: DoorEvent): Promise<void>;
}

export interface InventoryReport {
  lastSeq: number;
  /** Per subject: the state hash a gateway keeps, or what a vendor device reports (`observed`). */
  holds: { subject: { kind: SubjectKind; id: string }; stateHash?: string; observed?: ObservedEntry }[];
}

export interface DeviceTransport {
  readonly name: 'sandbox' | 'mqtt' | 'isapi' | 'zkteco-push';
  /**
   * A pull transport's devices fetch their commands themselves (ZKTeco PUSH polls): the sync job never
   * delivers to them; it only watches that they keep polling.
   */
  readonly pull?: boolean;
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
  requestInventory(devices: DeviceTarget[]): Promise<number>;
}
