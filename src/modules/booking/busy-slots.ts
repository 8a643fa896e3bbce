/** The booking module's side of the catalogue's BusySlots port: the holds on assets, from booking's tables. */
import type { BusySlots, HoldRow, MeetingSummary, SlotRow } from '../catalogue/index.js';
import type { SlotRepository } from './slot-repository.js';

export class BookingBusySlots implements BusySlots {
  constructor(private readonly slots: SlotRepository) {}

  inProjects(projectIds: string[], from: number, to: number): Promise<HoldRow[]> {
    return this.slots.slotsNear(projectIds, from, to);
  }

  onAsset(assetId: string, from: number, to: number, maxHoldMs: number): Promise<SlotRow[]> {
    return this.slots.assetSlots(assetId, from, to, maxHoldMs);
  }

  summaries(meetingIds: string[]): Promise<MeetingSummary[]> {
    return this.slots.meetingSummaries(meetingIds);
  }
}
