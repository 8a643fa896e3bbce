/**
 * What calendar sync needs of other modules, declared here and filled by services.ts:
 * the catalogue's rooms and the site's organizers. (The booking-change machinery comes
 * from the booking module's front door.)
 */
import type { AssetInContext } from '../catalogue/index.js';

/** A room this service books, with the lower-cased email its calendar invitations use. */
export type CalendarRoom = AssetInContext & { email: string };

/** The rooms of the service (the catalogue service fills it). */
export interface CalendarRooms {
  /** The rooms whose email is among `emails` (any case). */
  roomsByEmail(emails: string[]): Promise<CalendarRoom[]>;
  /** The project's rooms that have an email (their calendars take part in a connection). */
  roomsWithEmail(projectId: string): Promise<CalendarRoom[]>;
  /** One room with its project and floor, or undefined. */
  assetInContext(kind: 'room', id: string): Promise<AssetInContext | undefined>;
}

/** The organizer of an invitation, as the project knows them. */
export interface CalendarOrganizer {
  userId: string;
  name: string;
  email: string | null;
  displayName: string;
  blocked: boolean;
  /** Their active membership of the project: a member, a visitor, or none. */
  member: 'member' | 'visitor' | null;
  brandStaff: boolean;
}

/** Accounts by email (the site service fills it). */
export interface CalendarOrganizers {
  organizerByEmail(projectId: string, brandId: string, email: string): Promise<CalendarOrganizer | undefined>;
  accountsByEmail(emails: string[]): Promise<Map<string, { id: string; name: string }>>;
}
