/**
 * The rooms of a project held in memory with their serialized MeetingRoom JSON,
 * re-read only when the project's rooms change (a cheap count/latest-update
 * probe per search, so every instance sees changes made through any other).
 * Searches filter and assess these in memory and splice the stored JSON into
 * the response, instead of reading, mapping and serializing ~1,000 rows each time.
 * The JSON is kept UTF-8 encoded, so a ~1 MB answer is a copy of bytes rather than
 * a string to join, measure and encode again; rooms sharing a config share one
 * parsed config (the repository parses each distinct text once; the availability
 * search memoizes per config).
 */
import type { CatalogueRepository, RoomRow } from './catalogue-repository.js';
import { roomView } from './asset-views.js';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Rooms serialized between two turns of the event loop when a snapshot is built. */
const BUILD_SLICE = 1000;

export interface RoomSnapshot {
  row: RoomRow;
  /** The MeetingRoom object as UTF-8 JSON (without unavailableReason). */
  json: Buffer;
  nameLower: string;
}

export interface RoomFilter {
  zoneId?: string;
  floorId?: string;
  locationId?: string;
  ids?: string[];
  name?: string;
  statuses?: string[];
  type?: string;
  minCapacity?: number;
  publicOnly: boolean;
}

/** The rooms matching a search's filters, in name order. Pure. */
export function filterRooms(rooms: readonly RoomSnapshot[], f: RoomFilter): RoomSnapshot[] {
  const ids = f.ids ? new Set(f.ids) : null;
  const name = f.name?.toLowerCase();
  return rooms.filter(
    ({ row: r, nameLower }) =>
      (!f.zoneId || r.zone_id === f.zoneId) &&
      (!f.floorId || r.floor_id === f.floorId) &&
      (!f.locationId || r.zone_id === f.locationId || r.floor_id === f.locationId) &&
      (!ids || ids.has(r.id)) &&
      (!name || nameLower.includes(name)) &&
      (!f.statuses?.length || f.statuses.includes(r.status)) &&
      (!f.type || r.type === f.type) &&
      (f.minCapacity === undefined || r.capacity >= f.minCapacity) &&
      (!f.publicOnly || r.is_public),
  );
}

const byName = (a: RoomSnapshot, b: RoomSnapshot) =>
  a.row.name < b.row.name ? -1 : a.row.name > b.row.name ? 1 : a.row.id < b.row.id ? -1 : a.row.id > b.row.id ? 1 : 0;

export class RoomSnapshots {
  private readonly cache = new Map<string, { version: string; rooms: RoomSnapshot[] }>();

  constructor(private readonly repo: CatalogueRepository) {}

  /** Builds under way, by project and version: concurrent searches after a change share one build. */
  private readonly building = new Map<string, Promise<RoomSnapshot[]>>();

  async of(projectId: string): Promise<RoomSnapshot[]> {
    const version = await this.repo.roomsVersion(projectId);
    const hit = this.cache.get(projectId);
    if (hit && hit.version === version) return hit.rooms;
    const key = `${projectId}|${version}`;
    let build = this.building.get(key);
    if (!build) {
      build = this.build(projectId, version).finally(() => this.building.delete(key));
      this.building.set(key, build);
    }
    return build;
  }

  /** Reads and serializes the project's rooms, a turn of the event loop every BUILD_SLICE rooms. */
  private async build(projectId: string, version: string): Promise<RoomSnapshot[]> {
    const rows = await this.repo.projectRooms(projectId);
    const rooms: RoomSnapshot[] = [];
    for (let i = 0; i < rows.length; i++) {
      if (i > 0 && i % BUILD_SLICE === 0) await nextTurn();
      const row = rows[i]!;
      rooms.push({ row, json: Buffer.from(JSON.stringify(roomView(row))), nameLower: row.name.toLowerCase() });
    }
    rooms.sort(byName);
    this.cache.set(projectId, { version, rooms });
    return rooms;
  }
}

const reasonTails = new Map<string, Buffer>();

/** The room's JSON with `unavailableReason` added. */
export function withUnavailableReason(json: Buffer, reason: string): Buffer {
  let tail = reasonTails.get(reason);
  if (!tail) {
    tail = Buffer.from(`,"unavailableReason":${JSON.stringify(reason)}}`);
    reasonTails.set(reason, tail);
  }
  return Buffer.concat([json.subarray(0, -1), tail]);
}
