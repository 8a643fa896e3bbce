/**
 * The port through which the catalogue reads the holds on its assets. The holds are
 * the booking module's tables (meeting_slots, meetings): booking implements this port
 * and services.ts plugs it in, so the catalogue never reads another module's tables
 * (and never imports the booking module: booking depends on the catalogue).
 */

export interface SlotRow {
  id: string;
  meeting_id: string;
  asset_id: string;
  start_at: number;
  end_at: number;
}

/** A hold as a search needs it: which asset, and when. */
export type HoldRow = Pick<SlotRow, 'asset_id' | 'start_at' | 'end_at'>;

/** What a calendar entry may show of a meeting to its participants. */
export interface MeetingSummary {
  id: string;
  title: string;
  status: string;
  organizerUserId: string;
  /** Account ids of the attendees that have one. */
  attendeeUserIds: string[];
  appId: string | null;
}

export interface BusySlots {
  /**
   * Holds in the given projects that could conflict with [from, to) once cleaning
   * (at most MAX_CLEANUP_MS on each side) is counted.
   */
  inProjects(projectIds: string[], from: number, to: number): Promise<HoldRow[]>;
  /** Holds on one asset overlapping [from, to) (`maxHoldMs`: the project's longest hold). */
  onAsset(assetId: string, from: number, to: number, maxHoldMs: number): Promise<SlotRow[]>;
  /** Title, status, organizer and attendees of meetings, for participants' calendar entries. */
  summaries(meetingIds: string[]): Promise<MeetingSummary[]>;
}
