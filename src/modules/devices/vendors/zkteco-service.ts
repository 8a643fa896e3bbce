/**
 * What the ZKTeco PUSH endpoints do (zkteco-routes.ts is the HTTP side). The terminal identifies itself by
 * its serial number (SN) on every request; an unknown serial gets nothing. It handshakes (its upload stamps
 * come back), polls for commands (the device's pending sync commands as protocol lines, and the inventory
 * queries a reconcile asked for), reports each command's result, uploads the tables it was asked for and
 * its access logs. What is in flight is kept in the device's pull cursor, so any instance may serve a poll.
 */
import { timingSafeEqual } from 'node:crypto';
import type { DeviceRepository, DeviceRow } from '../device-repository.js';
import type { DeviceSync } from '../device-sync.js';
import type { DoorEvent, InventoryReport } from '../transport.js';
import type { SubjectKind, SubjectState } from '../rules/subject-state.js';
import { expectedCardNos } from '../rules/observed-state.js';
import { cardFormatOf } from '../device-sync.js';
import {
  commandLines,
  commandsFor,
  decodeZkTime,
  FACE_PHOTO_TYPE,
  handshakeText,
  INVENTORY_TABLES,
  inventoryQuery,
  parseAttlog,
  parseRecords,
  parseResults,
  parseRtlog,
  PARTS_PER_SEQ,
  QUERY_PART,
  returnOutcome,
  utcOffsetHours,
  type Fields,
  type RawAccess,
  type ZkCommand,
} from '../rules/zkteco-protocol.js';
import { askInventory, readCursor, type CursorLocks, type ZkCursor } from './zkteco-cursor.js';

/** Commands per poll. */
const POLL_BATCH = 50;

export interface ZktecoServiceDeps {
  sync: DeviceSync;
  repo: DeviceRepository;
  /** Opens the sealed commKey. */
  openSecret: (sealed: string) => string;
  /** Real time (ms). */
  realNow: () => number;
  /** Shared with the ZKTeco transport: one change of a device's cursor at a time. */
  locks: CursorLocks;
  /** Seconds between polls the handshake asks for. */
  pollSeconds?: number;
  /** A command handed out and not answered within this long (real ms) is handed out again. */
  resendMs?: number;
}

/** What an endpoint answers: 404 (unknown serial: empty body) or 200 with text. */
export interface ZkAnswer {
  status: 200 | 404;
  text: string;
}

const NOT_FOUND: ZkAnswer = { status: 404, text: '' };
const lower = (f: Fields): Fields => Object.fromEntries(Object.entries(f).map(([k, v]) => [k.toLowerCase(), v]));

export class ZktecoService {
  private readonly unknownLogged = new Map<string, number>();

  constructor(private readonly deps: ZktecoServiceDeps) {}

  /** Whether an unknown serial should be logged now (at most once a minute per serial). */
  shouldLogUnknown(serial: string): boolean {
    const now = this.deps.realNow();
    const last = this.unknownLogged.get(serial);
    if (last !== undefined && now - last < 60_000) return false;
    if (this.unknownLogged.size > 10_000) this.unknownLogged.clear();
    this.unknownLogged.set(serial, now);
    return true;
  }

  private async device(serial: string | undefined): Promise<DeviceRow | null> {
    if (!serial) return null;
    return (await this.deps.repo.deviceBySerial(serial)) ?? null;
  }

  private async cursor(deviceId: string): Promise<ZkCursor> {
    return readCursor(await this.deps.repo.pullCursor(deviceId));
  }

  private save(deviceId: string, cursor: ZkCursor): Promise<void> {
    return this.deps.repo.setPullCursor(deviceId, JSON.stringify(cursor));
  }

  /** The handshake `GET /iclock/cdata?SN=…&options=all`: the device's options and stamps. */
  async handshake(query: Record<string, string | undefined>): Promise<ZkAnswer> {
    const device = await this.device(query.SN);
    if (!device || !this.commKeyAccepted(device, query.pushcommkey)) return NOT_FOUND;
    await this.deps.sync.pulled(device.id);
    // A terminal handshakes when it starts (maybe without its memory): its user list is read back.
    const cursor = await this.deps.locks.run(device.id, async () => {
      const c = await this.cursor(device.id);
      askInventory(c);
      await this.save(device.id, c);
      return c;
    });
    const text = handshakeText({
      serialNumber: query.SN ?? '',
      stamps: cursor.stamps,
      delaySeconds: this.deps.pollSeconds ?? 10,
      timeZoneHours: utcOffsetHours(device.timeZone, this.deps.realNow()),
    });
    return { status: 200, text };
  }

  /** A device with a commKey must send the same as `pushcommkey` on its handshake (compared in constant time). */
  private commKeyAccepted(device: DeviceRow, sent: string | undefined): boolean {
    if (!device.transportSecretEnc) return true;
    const want = Buffer.from(this.deps.openSecret(device.transportSecretEnc));
    const got = Buffer.from(sent ?? '');
    return got.length === want.length && timingSafeEqual(got, want);
  }

  /** `GET /iclock/getrequest?SN=…`: the pending commands as `C:<id>:…` lines, the inventory queries; `OK` when nothing. */
  async getrequest(serial: string | undefined): Promise<ZkAnswer> {
    const device = await this.device(serial);
    if (!device) return NOT_FOUND;
    await this.deps.sync.pulled(device.id);
    return this.deps.locks.run(device.id, () => this.handOut(device));
  }

  /** getrequest's answer, the device's cursor held. */
  private async handOut(device: DeviceRow): Promise<ZkAnswer> {
    const { sync, repo, realNow } = this.deps;
    const cursor = await this.cursor(device.id);
    const now = realNow();
    const resendMs = this.deps.resendMs ?? 60_000;
    const out: ZkCommand[] = [];
    const wires = await sync.pendingWires(device.id, POLL_BATCH);
    // Commands no longer pending (superseded, or answered elsewhere) and long unanswered: forgotten.
    const pending = new Set(wires.map((w) => String(w.seq)));
    for (const [seq, sent] of Object.entries(cursor.sent)) if (!pending.has(seq) && now - sent.at >= resendMs) delete cursor.sent[seq];
    for (const wire of wires) {
      const sent = cursor.sent[String(wire.seq)];
      if (sent && now - sent.at < resendMs) continue;
      const parts = commandsFor(wire, await repo.userNumber(wire.subject), device.timeZone);
      cursor.sent[String(wire.seq)] = { at: now, parts: parts.length, results: {} };
      out.push(...parts);
    }
    const inv = cursor.inventory;
    if (inv && (inv.sentAt === null || now - inv.sentAt >= resendMs)) {
      inv.sentAt = now;
      inv.tables = {};
      INVENTORY_TABLES.forEach((t, i) => out.push({ id: inv.round * PARTS_PER_SEQ + QUERY_PART + i, text: inventoryQuery(t) }));
    }
    await this.save(device.id, cursor);
    return { status: 200, text: out.length ? commandLines(out) : 'OK' };
  }

  /** `POST /iclock/devicecmd?SN=…`: results, `ID=…&Return=…&CMD=…` per line. A seq is applied when all its parts returned 0. */
  async devicecmd(serial: string | undefined, body: string): Promise<ZkAnswer> {
    const device = await this.device(serial);
    if (!device) return NOT_FOUND;
    await this.deps.sync.pulled(device.id);
    await this.deps.locks.run(device.id, () => this.results(device, body));
    return { status: 200, text: 'OK' };
  }

  /** devicecmd's results applied, the device's cursor held. */
  private async results(device: DeviceRow, body: string): Promise<void> {
    const cursor = await this.cursor(device.id);
    const answered: { seq: number; ok: boolean; message?: string }[] = [];
    let inventoryReady = false;
    for (const r of parseResults(body)) {
      const id = Number(r.id);
      if (!Number.isSafeInteger(id) || id <= 0) continue;
      const seq = Math.floor(id / PARTS_PER_SEQ);
      const part = id % PARTS_PER_SEQ;
      if (part >= QUERY_PART) {
        inventoryReady = this.queryAnswered(cursor, seq, part - QUERY_PART, r.code) || inventoryReady;
        continue;
      }
      const sent = cursor.sent[String(seq)];
      if (!sent || part >= sent.parts) continue; // an id the service never gave (or no longer waits for)
      const outcome = returnOutcome(r.code);
      if (outcome.kind === 'transient') {
        delete cursor.sent[String(seq)]; // handed out again at the next poll
      } else if (outcome.kind === 'bad-input') {
        answered.push({ seq, ok: false, message: outcome.message });
        delete cursor.sent[String(seq)];
      } else {
        sent.results[String(part)] = r.code;
        if (Object.keys(sent.results).length === sent.parts) {
          answered.push({ seq, ok: true });
          delete cursor.sent[String(seq)];
        }
      }
    }
    await this.save(device.id, cursor);
    if (answered.length) await this.deps.sync.acknowledge(device.id, answered);
    if (inventoryReady) await this.finishInventory(device, cursor);
  }

  /** A query's result: a failure drops the round (asked again at the next reconcile); Return=0 is an empty table. */
  private queryAnswered(cursor: ZkCursor, round: number, tableIndex: number, code: number): boolean {
    const inv = cursor.inventory;
    const table = INVENTORY_TABLES[tableIndex];
    if (!inv || inv.round !== round || !table) return false;
    if (code < 0) {
      delete cursor.inventory;
      return false;
    }
    if (code === 0) inv.tables[table] = { rows: [], done: true };
    return INVENTORY_TABLES.every((t) => inv.tables[t]?.done);
  }

  /** `POST /iclock/querydata?SN=…&cmdid=…&tablename=…&packcnt=…&packidx=…`: rows of a table the service asked for. */
  async querydata(query: Record<string, string | undefined>, body: string): Promise<ZkAnswer> {
    const device = await this.device(query.SN);
    if (!device) return NOT_FOUND;
    await this.deps.sync.pulled(device.id);
    const rows = parseRecords(body).map((r) => lower(r.fields));
    await this.deps.locks.run(device.id, async () => {
      const cursor = await this.cursor(device.id);
      const inv = cursor.inventory;
      const id = Number(query.cmdid);
      const table = INVENTORY_TABLES.find((t) => t === query.tablename);
      if (!inv || !table || !Number.isSafeInteger(id) || Math.floor(id / PARTS_PER_SEQ) !== inv.round) return;
      const have = inv.tables[table] ?? { rows: [], done: false };
      const packIdx = Number(query.packidx ?? '1');
      const packCnt = Number(query.packcnt ?? '1');
      inv.tables[table] = { rows: [...have.rows, ...rows], done: !(packIdx < packCnt) };
      await this.save(device.id, cursor);
      if (INVENTORY_TABLES.every((t) => inv.tables[t]?.done)) await this.finishInventory(device, cursor);
    });
    return { status: 200, text: `${query.tablename ?? ''}=${rows.length}` };
  }

  /** Every table is in: what the device holds, per user the service gave a PIN, goes to the sync. */
  private async finishInventory(device: DeviceRow, cursor: ZkCursor): Promise<void> {
    const inv = cursor.inventory;
    if (!inv) return;
    delete cursor.inventory;
    await this.save(device.id, cursor);
    const { user = [], mulcarduser = [], biophoto = [] } = Object.fromEntries(Object.entries(inv.tables).map(([t, v]) => [t, v.rows]));
    const holds: InventoryReport['holds'] = [];
    const held = new Map((await this.deps.repo.enrollments(device.id)).map((e) => [`${e.subject_kind}:${e.subject_id}`, e.state]));
    for (const u of user) {
      const pin = Number(u.pin);
      const subject = Number.isSafeInteger(pin) && pin > 0 ? await this.deps.repo.subjectOfNumber(pin) : undefined;
      if (!subject) continue; // a user the service did not give
      const cards = [u.cardno, ...mulcarduser.filter((m) => Number(m.pin) === pin).map((m) => m.cardno)]
        .filter((c): c is string => !!c && c !== '0')
        .map(sameCardAs(held.get(`${subject.kind}:${subject.id}`), cardFormatOf(device)));
      holds.push({
        subject: { kind: subject.kind as SubjectKind, id: subject.id },
        observed: {
          cardNos: cards,
          face: biophoto.some((p) => Number(p.pin) === pin && Number(p.type ?? FACE_PHOTO_TYPE) === FACE_PHOTO_TYPE),
          validFrom: decodeZkTime(Number(u.starttime ?? 0), device.timeZone),
          validUntil: decodeZkTime(Number(u.endtime ?? 0), device.timeZone),
        },
      });
    }
    await this.deps.sync.applyInventory(device.id, { lastSeq: 0, holds });
  }

  /** `POST /iclock/cdata?SN=…&table=…&Stamp=…`: access logs (rtlog, ATTLOG) become door events; `OK: <lines>`. */
  async upload(query: Record<string, string | undefined>, body: string): Promise<ZkAnswer> {
    const device = await this.device(query.SN);
    if (!device) return NOT_FOUND;
    await this.deps.sync.pulled(device.id);
    const table = query.table ?? '';
    const lines = body.split(/\r?\n/).filter((l) => l.trim());
    const raws: RawAccess[] = [];
    for (const line of lines) {
      const raw =
        table === 'rtlog'
          ? parseRtlog(lower(parseRecords(line)[0]?.fields ?? {}), device.timeZone)
          : table === 'ATTLOG'
            ? parseAttlog(line, device.timeZone)
            : null;
      if (raw) raws.push(raw);
    }
    for (const raw of raws) await this.deps.sync.access(await this.event(device.id, raw));
    const stamp = query.Stamp ?? query.stamp;
    if (table && stamp) {
      await this.deps.locks.run(device.id, async () => {
        const cursor = await this.cursor(device.id);
        cursor.stamps[table] = stamp;
        await this.save(device.id, cursor);
      });
    }
    return { status: 200, text: `OK: ${lines.length}` };
  }

  private async event(deviceId: string, raw: RawAccess): Promise<DoorEvent> {
    const subject = raw.pin === null ? undefined : await this.deps.repo.subjectOfNumber(raw.pin);
    return {
      deviceId,
      eventKey: raw.key,
      at: raw.at,
      granted: raw.granted,
      credentialKind: raw.credential,
      subject: subject ? { kind: subject.kind as SubjectKind, id: subject.id } : null,
      cardNo: raw.cardNo,
    };
  }
}

/**
 * A terminal that keeps card numbers as numbers reads them back without their leading zeros: such a number
 * stands for the card the service sent when their values are equal.
 */
function sameCardAs(state: SubjectState | undefined, format: string): (reported: string) => string {
  const sent = state ? expectedCardNos(state, format) : [];
  const digits = /^[0-9]+$/;
  return (reported) => (digits.test(reported) && sent.find((c) => digits.test(c) && BigInt(c) === BigInt(reported))) || reported;
}
