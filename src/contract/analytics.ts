/**
 * Utilisation analytics (GET /ops/v1/analytics/utilisation) and the per-organizer report a project
 * may turn on (GET /ops/v1/analytics/organizers). Every figure is defined in docs/analytics.md.
 */
import { Type, type Static } from 'typebox';
import { ObjectId } from './common.js';

export const ANALYTICS_GROUP_BY = ['project', 'zone', 'floor', 'asset', 'day', 'week', 'month', 'hourOfWeek'] as const;
export type AnalyticsGroupBy = (typeof ANALYTICS_GROUP_BY)[number];

/** Longest range, in local days (from and to inclusive). */
export const ANALYTICS_MAX_DAYS = 366;

const LocalDate = (description: string) =>
  Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', format: 'date', description: `${description} (YYYY-MM-DD, the property's local date)` });

export const UtilisationQuery = Type.Object(
  {
    project: ObjectId('The project (_id)'),
    from: LocalDate('First day of the range'),
    to: LocalDate('Last day of the range, included; the range holds at most 366 days'),
    groupBy: Type.Optional(
      Type.Enum([...ANALYTICS_GROUP_BY], { description: 'What one row stands for; default project', default: 'project' }),
    ),
    assetKind: Type.Optional(Type.Enum(['room', 'desk'], { description: 'Rooms or desks; default room', default: 'room' })),
    floor: Type.Optional(ObjectId('Only assets on this floor')),
    zone: Type.Optional(ObjectId('Only assets in this zone')),
    asset: Type.Optional(ObjectId('Only this room or desk')),
  },
  { additionalProperties: false },
);
export type UtilisationQuery = Static<typeof UtilisationQuery>;

export const UtilisationGroup = Type.Object(
  {
    projectId: Type.Optional(Type.String()),
    projectName: Type.Optional(Type.String()),
    zoneId: Type.Optional(Type.String()),
    zoneName: Type.Optional(Type.String()),
    floorId: Type.Optional(Type.String()),
    floorName: Type.Optional(Type.String()),
    assetId: Type.Optional(Type.String()),
    assetName: Type.Optional(Type.String()),
    day: Type.Optional(Type.String({ description: 'groupBy day: the local date' })),
    week: Type.Optional(Type.String({ description: "groupBy week: the ISO week's Monday (local date)" })),
    month: Type.Optional(Type.String({ description: 'groupBy month: YYYY-MM' })),
    weekday: Type.Optional(Type.Integer({ minimum: 1, maximum: 7, description: 'groupBy hourOfWeek: ISO weekday, 1 = Monday' })),
    hour: Type.Optional(Type.Integer({ minimum: 0, maximum: 23, description: 'groupBy hourOfWeek: local hour' })),
  },
  { description: "The group's ids and names, or its period" },
);
export type UtilisationGroup = Static<typeof UtilisationGroup>;

const Minutes = (description: string) => Type.Integer({ minimum: 0, description });
const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Ratio = (description: string) => Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], { description });

export const UtilisationFigures = Type.Object({
  availableMinutes: Minutes('Opening hours minus breaks of the active assets, per local day'),
  bookedMinutes: Minutes('From each counted booking’s start to its actual end, inside the available time'),
  occupiedMinutes: Minutes('From check-in (or the start, if earlier) to the actual end, inside the available time'),
  releasedMinutes: Minutes('Booked minutes given back: early check-out, no-show release or cancellation after the start'),
  bookings: Count('Counted bookings (occurrences) whose booked start lies in the group'),
  checkIns: Count('Of those, the ones checked in'),
  noShows: Count('Of those, the ones cancelled by the system for a no-show'),
  cancellations: Count('Of those, the ones cancelled by a person before their start'),
  walkIns: Count('Granted door entries at an asset with no booking there'),
  utilisation: Ratio('bookedMinutes / availableMinutes; null when nothing was available'),
  occupancy: Ratio('occupiedMinutes / availableMinutes; null when nothing was available'),
  noShowRate: Ratio('noShows / bookings that reached their start; null when none did'),
});
export type UtilisationFigures = Static<typeof UtilisationFigures>;

export const UtilisationRow = Type.Object({ group: UtilisationGroup, ...UtilisationFigures.properties });
export type UtilisationRow = Static<typeof UtilisationRow>;

/** Per organizer (only when the project turns on `analytics.namedReports`). */
export const OrganizersQuery = Type.Object(
  {
    project: ObjectId('The project (_id)'),
    from: LocalDate('First day of the range'),
    to: LocalDate('Last day of the range, included; the range holds at most 366 days'),
    assetKind: Type.Optional(Type.Enum(['room', 'desk'], { description: 'Rooms or desks; default room', default: 'room' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Rows, most no-shows first (default 50)' })),
  },
  { additionalProperties: false },
);
export type OrganizersQuery = Static<typeof OrganizersQuery>;

export const OrganizerRow = Type.Object({
  userId: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  email: Type.Union([Type.String(), Type.Null()]),
  bookings: Count('Counted bookings whose booked start lies in the range'),
  reachedStart: Count('Of those, the ones that reached their start (not cancelled before it)'),
  noShows: Count('Cancelled by the system for a no-show'),
  ghostMeetings: Count('Reached their start and nobody checked in (no-shows included)'),
  bookedMinutes: Minutes('As in the utilisation figures'),
  noShowRate: Ratio('noShows / reachedStart'),
});
export type OrganizerRow = Static<typeof OrganizerRow>;

export const AnalyticsStatus = Type.Object({
  pendingBookings: Count('Bookings changed since the figures were last brought up to date'),
  pendingWalkIns: Count('Walk-ins not yet counted'),
  pendingAssets: Count('Rooms and desks whose opening hours, status or zone changed (or that are new) and are not yet recorded'),
});
export type AnalyticsStatus = Static<typeof AnalyticsStatus>;
