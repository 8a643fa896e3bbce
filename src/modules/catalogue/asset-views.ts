/** Maps stored rooms and desks to the API's MeetingRoom and Desk objects. */
import type { DeskRow, RoomRow } from './catalogue-repository.js';
import type { AssetConfigView } from '../../contract/asset-config.js';
import type { Desk, MeetingRoom, Vertex } from '../../contract/catalogue.js';

export type RoomView = MeetingRoom;
export type DeskView = Desk;

const iso = (ms: number) => new Date(ms).toISOString();

function polygonOf(polygon: Vertex[] | null): Vertex[] | undefined {
  return polygon && polygon.length ? polygon : undefined;
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
    equipmentsAvailability: r.equipments,
    pictureUrls: r.picture_urls,
    facilities: r.facilities,
    isPublic: r.is_public,
    ...(r.cleanup_minutes !== null ? { cleanupMinutes: r.cleanup_minutes } : {}),
    chargeRate: r.charge_rate,
    config: r.config as AssetConfigView,
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
    isPublic: d.is_public,
    brandId: d.brand_id,
    projectId: d.project_id,
    zoneId: d.zone_id,
    floorId: d.floor_id,
    capacity: d.capacity,
    facilities: d.facilities,
    pictureUrls: d.picture_urls,
    chargeRate: d.charge_rate,
    config: d.config as AssetConfigView,
    ...(polygon ? { polygon } : {}),
    createdAt: iso(d.created_at),
    updatedAt: iso(d.updated_at),
  };
}
