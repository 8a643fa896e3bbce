/** Maps stored rooms and desks to the API's MeetingRoom and Desk objects. */
import type { DeskRow, RoomRow } from './catalogue-repository.js';
import type { AssetConfig, AssetConfigView } from '../../contract/asset-config.js';
import type { ChargeRate, Desk, MeetingRoom, Vertex } from '../../contract/catalogue.js';

export type RoomView = MeetingRoom;
export type DeskView = Desk;

const iso = (ms: number) => new Date(ms).toISOString();

/** JSON.parse, or a memoizing stand-in (see `viewsOf`). */
type ParseJson = (text: string) => unknown;

/**
 * A JSON.parse that parses each distinct text once. Assets of a site mostly share
 * their config (and equipment, facilities, prices), so a listing parses a handful
 * of texts instead of one per asset. The parsed values are shared between the
 * views built with it, so they must be treated as read-only (they are: views are
 * only serialized).
 */
function memoParse(): ParseJson {
  const memo = new Map<string, unknown>();
  return (text) => {
    let value = memo.get(text); // JSON.parse never yields undefined, so undefined means "not seen"
    if (value === undefined) {
      value = JSON.parse(text) as unknown;
      memo.set(text, value);
    }
    return value;
  };
}

/** View builders for one listing: identical JSON columns are parsed once for all its assets. */
export function viewsOf(): { room: (r: RoomRow) => RoomView; desk: (d: DeskRow) => DeskView } {
  const parse = memoParse();
  return { room: (r) => buildRoomView(r, parse), desk: (d) => buildDeskView(d, parse) };
}

function polygonOf(raw: string | null, parse: ParseJson): Vertex[] | undefined {
  if (raw === null) return undefined;
  const parsed = parse(raw) as Vertex[] | null;
  return parsed && parsed.length ? parsed : undefined;
}

export function parseConfig(raw: string): AssetConfig {
  return JSON.parse(raw) as AssetConfig;
}

export function roomView(r: RoomRow): RoomView {
  return buildRoomView(r, JSON.parse);
}

export function deskView(d: DeskRow): DeskView {
  return buildDeskView(d, JSON.parse);
}

function buildRoomView(r: RoomRow, parse: ParseJson): RoomView {
  const polygon = polygonOf(r.polygon, parse);
  return {
    _id: r.id,
    name: r.name,
    email: r.email ?? '',
    capacity: r.capacity,
    status: r.status,
    type: r.type,
    brandId: r.brand_id,
    projectId: r.project_id,
    zoneId: r.zone_id,
    floorId: r.floor_id,
    equipmentsAvailability: parse(r.equipments) as Record<string, boolean>,
    pictureUrls: parse(r.picture_urls) as string[],
    facilities: parse(r.facilities) as string[],
    isPublic: r.is_public === 1,
    ...(r.cleanup_minutes !== null ? { cleanupMinutes: r.cleanup_minutes } : {}),
    chargeRate: parse(r.charge_rate) as ChargeRate,
    config: parse(r.config) as AssetConfigView,
    ...(polygon ? { polygon } : {}),
    ...(r.address_no !== null ? { addressNo: r.address_no } : {}),
    ...(r.unit_id !== null ? { unitId: r.unit_id } : {}),
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

function buildDeskView(d: DeskRow, parse: ParseJson): DeskView {
  const polygon = polygonOf(d.polygon, parse);
  return {
    _id: d.id,
    name: d.name,
    index: d.desk_index,
    email: d.email ?? '',
    status: d.status,
    isPublic: d.is_public === 1,
    brandId: d.brand_id,
    projectId: d.project_id,
    zoneId: d.zone_id,
    floorId: d.floor_id,
    capacity: d.capacity,
    facilities: parse(d.facilities) as string[],
    pictureUrls: parse(d.picture_urls) as string[],
    chargeRate: parse(d.charge_rate) as ChargeRate,
    config: parse(d.config) as AssetConfigView,
    ...(polygon ? { polygon } : {}),
    createdAt: iso(d.created_at),
    updatedAt: iso(d.updated_at),
  };
}
