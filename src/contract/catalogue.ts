/** Schemas of MeetingRoom, Desk, their booking calendar, and the catalogue queries. */
import { Type, type Static } from 'typebox';
import { DateTime, ObjectId, Pagination } from './common.js';
import { AssetConfigView } from './asset-config.js';

const Vertex = Type.Object({ xPct: Type.Number(), yPct: Type.Number() });
export type Vertex = Static<typeof Vertex>;

const Polygon = Type.Array(Vertex, {
  description: 'Outline on the floor plan, vertices in percent of the image, implicitly closed',
});

const ChargeRate = Type.Object(
  { perHour: Type.Number(), perDay: Type.Number(), amount: Type.Optional(Type.Number()) },
  { additionalProperties: true, description: 'Price of the asset in the project currency' },
);
export type ChargeRate = Static<typeof ChargeRate>;

const Busy = Type.Object({
  startDateTime: DateTime(),
  endDateTime: DateTime(),
  cleaningEndsAt: DateTime('The asset is held until this instant (end plus cleaning time)'),
  meetingId: Type.Optional(Type.String({ description: 'Only for participants of the booking' })),
  title: Type.Optional(Type.String({ description: 'Only for participants of the booking' })),
});

export const CalendarSchema = Type.Object(
  {
    from: DateTime(),
    to: DateTime(),
    timeZone: Type.String({ description: 'IANA time zone of the property' }),
    cleanupMinutes: Type.Integer({ description: 'Effective cleaning time held after each booking' }),
    busy: Type.Array(Busy),
  },
  { description: 'Busy intervals of the asset within [from, to)' },
);
export type Calendar = Static<typeof CalendarSchema>;

const assetCommon = {
  _id: Type.String(),
  name: Type.String(),
  email: Type.String(),
  capacity: Type.Integer(),
  isPublic: Type.Boolean({ description: "false: only the project's members may see and book it" }),
  brandId: Type.String(),
  projectId: Type.String(),
  zoneId: Type.String(),
  floorId: Type.String(),
  facilities: Type.Array(Type.String()),
  pictureUrls: Type.Array(Type.String()),
  chargeRate: ChargeRate,
  config: AssetConfigView,
  polygon: Type.Optional(Polygon),
  createdAt: DateTime(),
  updatedAt: DateTime(),
};

export const MeetingRoomSchema = Type.Object(
  {
    ...assetCommon,
    status: Type.String({ description: 'active or inactive' }),
    type: Type.String({ description: 'normal or bedroom' }),
    equipmentsAvailability: Type.Object(
      {
        camera: Type.Optional(Type.Boolean()),
        display: Type.Optional(Type.Boolean()),
        mic: Type.Optional(Type.Boolean()),
        projector: Type.Optional(Type.Boolean()),
        speaker: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: true },
    ),
    cleanupMinutes: Type.Optional(Type.Integer({ description: 'Own cleaning time; absent means the property default' })),
    addressNo: Type.Optional(Type.String()),
    unitId: Type.Optional(Type.String()),
    unavailableReason: Type.Optional(
      Type.String({
        description:
          'Only in a windowed search, on rooms that are free but cannot be booked for that window: OPERATING_HOURS, BREAK_TIME, LEAD_TIME, ADVANCE_DAYS, MAX_DURATION or MULTI_DAY',
      }),
    ),
  },
  { description: 'A meeting room' },
);
export type MeetingRoom = Static<typeof MeetingRoomSchema>;

export const DeskSchema = Type.Object(
  {
    ...assetCommon,
    index: Type.Integer(),
    status: Type.String({ description: 'active, inactive, in-used, reserved or suspended' }),
  },
  { description: 'A desk' },
);
export type Desk = Static<typeof DeskSchema>;

/** The unpaginated room search result. */
export const MeetingRoomList = Type.Array(MeetingRoomSchema);

export const MeetingRoomWithCalendar = Type.Object({ ...MeetingRoomSchema.properties, calendar: CalendarSchema });
export const DeskWithCalendar = Type.Object({ ...DeskSchema.properties, calendar: CalendarSchema });
export type MeetingRoomWithCalendar = Static<typeof MeetingRoomWithCalendar>;
export type DeskWithCalendar = Static<typeof DeskWithCalendar>;

// ---------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------

export const RoomQuery = Type.Object({
  projectId: ObjectId('Project to search (required)'),
  zoneId: Type.Optional(ObjectId()),
  floorId: Type.Optional(ObjectId()),
  locationId: Type.Optional(ObjectId('Matches rooms whose zone or floor has this id')),
  ids: Type.Optional(Type.Array(ObjectId(), { description: 'Only these rooms; repeat the key or use a comma list' })),
  name: Type.Optional(Type.String({ description: 'Case-insensitive part of the name' })),
  status: Type.Optional(Type.Array(Type.Union([Type.Literal('active'), Type.Literal('inactive')]))),
  type: Type.Optional(Type.Union([Type.Literal('normal'), Type.Literal('bedroom')])),
  minCapacity: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'At least this many seats, 1 or more (at most 2^53-1); more than any room holds finds none',
    }),
  ),
  startDateTime: Type.Optional(DateTime('Window start; needs endDateTime')),
  endDateTime: Type.Optional(DateTime('Window end; needs startDateTime')),
});
export type RoomQuery = Static<typeof RoomQuery>;

// Written out so the static type is the union of the literals, not never.
const DeskStatus = Type.Union([
  Type.Literal('active'),
  Type.Literal('inactive'),
  Type.Literal('in-used'),
  Type.Literal('reserved'),
  Type.Literal('suspended'),
]);

export const DeskQuery = Type.Object({
  projectId: Type.Optional(ObjectId()),
  brandId: Type.Optional(ObjectId()),
  zoneId: Type.Optional(ObjectId()),
  floorId: Type.Optional(ObjectId()),
  locationId: Type.Optional(ObjectId('Matches desks whose zone or floor has this id')),
  ids: Type.Optional(Type.Array(ObjectId())),
  name: Type.Optional(Type.String({ description: 'Case-insensitive part of the name' })),
  email: Type.Optional(Type.String()),
  status: Type.Optional(DeskStatus),
  statuses: Type.Optional(Type.Array(DeskStatus)),
  startDateTime: Type.Optional(DateTime('Window start; needs exactly one of endDateTime or timePeriod')),
  endDateTime: Type.Optional(DateTime()),
  timePeriod: Type.Optional(
    Type.Union([Type.Literal('morning'), Type.Literal('afternoon'), Type.Literal('allDay')], {
      description: "morning = opening to 12:00, afternoon = 12:00 to closing, allDay = opening to closing, on the start's local date",
    }),
  ),
  ...Pagination,
});
export type DeskQuery = Static<typeof DeskQuery>;

export const CalendarQuery = Type.Object({
  from: Type.Optional(DateTime('Calendar start (default: now)')),
  to: Type.Optional(DateTime('Calendar end (default: 7 days after from; at most 62 days)')),
});
export type CalendarQuery = Static<typeof CalendarQuery>;
