/**
 * The door tests' site: deviceSite() plus a meeting room and a desk on the tower's floor fA whose doors
 * are devices of an access group the partner app does NOT grant (`doors`: d1 a face-card-reader, d2 a
 * card-reader), so members get in there only through a booking. `over` changes the door devices (their
 * transport, say) and `assets` the accessDevices of the room and desk.
 */
import { deviceSite } from './devices.js';

export interface DoorSiteOptions {
  /** Extra fields of each door device, by key (e.g. a transport). */
  devices?: Record<string, Record<string, unknown>>;
  roomDoors?: string[];
  deskDoors?: string[];
}

export function doorSite(opts: DoorSiteOptions = {}) {
  const doc = deviceSite();
  doc.accessGroups.push({
    key: 'doors',
    project: 'tower',
    name: 'Meeting room doors',
    devices: [
      { key: 'd1', name: 'Board room door', kind: 'face-card-reader', ...(opts.devices?.d1 ?? {}) },
      { key: 'd2', name: 'Hot desk gate', kind: 'card-reader', ...(opts.devices?.d2 ?? {}) },
    ],
  } as never);
  doc.rooms.push({
    key: 'board',
    floor: 'fA',
    name: 'Board room',
    capacity: 8,
    accessDevices: opts.roomDoors ?? ['d1'],
  });
  doc.desks = [...(doc.desks ?? []), { key: 'hot1', floor: 'fA', name: 'Hot desk 1', accessDevices: opts.deskDoors ?? ['d2'] }];
  return doc;
}
