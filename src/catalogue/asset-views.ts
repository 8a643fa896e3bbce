/** Maps stored rooms and desks to the API's MeetingRoom and Desk objects. */
import type { DeskRow, RoomRow } from '../storage/repositories/catalogue-repository.js';
import type { Static } from 'typebox';
import type { AssetConfig } from '../booking/asset-config.js';
import type { DeskSchema, MeetingRoomSchema } from '../http/schemas/catalogue-schemas.js';

export type RoomView = Static<typeof MeetingRoomSchema>;
export type DeskView = Static<typeof DeskSchema>;
type ApiConfig = RoomView['config'];
type ChargeRate = RoomView['chargeRate'];

const iso = (ms: number) => new Date(ms).toISOString();

export interface Vertex {
  xPct: number;
  yPct: number;
}

function polygonOf(raw: string | null): Vertex[] | undefined {
  if (raw === null) return undefined;
  const parsed = JSON.parse(raw) as Vertex[] | null;
  return parsed && parsed.length ? parsed : undefined;
}

export function parseConfig(raw: string): AssetConfig {
  return JSON.parse(raw) as AssetConfig;
}

export function roomView(r: RoomRow): RoomView {
  const polygon = polygonOf(r.polygon);
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
    equipmentsAvailability: JSON.parse(r.equipments) as Record<string, boolean>,
    pictureUrls: JSON.parse(r.picture_urls) as string[],
    facilities: JSON.parse(r.facilities) as string[],
    isPublic: r.is_public === 1,
    ...(r.cleanup_minutes !== null ? { cleanupMinutes: r.cleanup_minutes } : {}),
    chargeRate: JSON.parse(r.charge_rate) as ChargeRate,
    config: parseConfig(r.config) as ApiConfig,
    ...(polygon ? { polygon } : {}),
    ...(r.address_no !== null ? { addressNo: r.address_no } : {}),
    ...(r.unit_id !== null ? { unitId: r.unit_id } : {}),
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export function deskView(d: DeskRow): DeskView {
  const polygon = polygonOf(d.polygon);
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
    facilities: JSON.parse(d.facilities) as string[],
    pictureUrls: JSON.parse(d.picture_urls) as string[],
    chargeRate: JSON.parse(d.charge_rate) as ChargeRate,
    config: parseConfig(d.config) as ApiConfig,
    ...(polygon ? { polygon } : {}),
    createdAt: iso(d.created_at),
    updatedAt: iso(d.updated_at),
  };
}
