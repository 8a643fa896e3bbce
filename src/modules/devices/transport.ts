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
import type { SubjectKind } from './rules/subject-state.js';

/** A command as a device receives it (JSON on the wire). */
export interface WireCommand {
  v: 1;
  deviceId: string;
  /** Per-device sequence number, strictly increasing; a device applies each once, in order. */
  seq: number;
  op: 'upsert' | 'remove';
  subject: { kind: SubjectKind; id: string };
  /** Hash of the subject's state after this command (reported back in an inventory). */
  stateHash: string;
  /** upsert: the cards, each in the device's own format. */
  cards?: { uid: string; cardNo: string; format: string }[];
  /** upsert: the face image (base64), or null for none. Only ever sent to devices. */
  face?: { mime: string; sha256: string; data: string } | null;
  /** upsert, visitors: the QR card code the reader must accept, or null. */
  qrCode?: string | null;
  /** upsert, visitors: licence plates (normalized) an LPR camera must accept. */
  plates?: string[];
  /** upsert: validity window (ISO 8601 instants), null for unbounded. */
  validFrom?: string | null;
  validUntil?: string | null;
}

export type FailureKind = 'offline' | 'temporary' | 'bad-input';

/** A device's answer to one command. */
export interface WireAck {
  v: 1;
  deviceId: string;
  seq: number;
  ok: boolean;
  error?: { kind: FailureKind; message: string };
}

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
  /** The device's full memory: subject and state hash per enrolled subject, and the last sequence it applied. */
  inventory(deviceId: string, report: { lastSeq: number; holds: { subject: { kind: SubjectKind; id: string }; stateHash: string }[] }): void;
}

export interface DeviceTransport {
  readonly name: 'sandbox' | 'mqtt';
  /** Connects (mqtt) and starts reporting events. */
  start(events: TransportEvents): Promise<void>;
  stop(): Promise<void>;
  /** Sends the commands in order and reports the answers (see the module comment). */
  deliver(device: DeviceTarget, commands: WireCommand[]): Promise<DeliveryReport>;
}
