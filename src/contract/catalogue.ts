/** Schemas of MeetingRoom, Desk, their config and their booking calendar. */
import { Type } from 'typebox';
import { DateTime } from './common.js';

const Clock = Type.String({ description: 'Property-local wall-clock time, HH:mm:ss' });
const Range = Type.Object({ start: Clock, end: Clock });

const DayConfig = Type.Object({
  availableTime: Range,
  breakTimes: Type.Optional(Type.Array(Range, { description: 'Booking is refused when it overlaps a break' })),
});

export const AssetConfigSchema = Type.Object(
  {
    dayConfig: Type.Optional(
      Type.Record(Type.String(), DayConfig, {
        description: 'Operating hours per weekday (Mon..Sun); a missing day is not bookable. Takes precedence over start/end.',
      }),
    ),
    start: Type.Optional(Type.String({ description: 'Legacy opening time for every day, used only without dayConfig' })),
    end: Type.Optional(Type.String({ description: 'Legacy closing time for every day, used only without dayConfig' })),
    minimumLeadTime: Type.Optional(
      Type.Object({ minutes: Type.Optional(Type.Number()), hours: Type.Optional(Type.Number()), days: Type.Optional(Type.Number()) }),
    ),
    maxAdvanceBookingDays: Type.Optional(Type.Number()),
    maxDurationMinutes: Type.Optional(Type.Number()),
    bookMultipleDayRoom: Type.Optional(Type.Boolean()),
    meetingConfig: Type.Optional(
      Type.Object({
        preStartMinutes: Type.Optional(Type.Integer()),
        postStartWarnMinutes: Type.Optional(Type.Integer()),
        postStartExpireMinutes: Type.Optional(Type.Integer()),
        preEndMinutes: Type.Optional(Type.Integer()),
      }),
    ),
  },
  { additionalProperties: true, description: 'Booking rules of the asset' },
);

const Polygon = Type.Array(Type.Object({ xPct: Type.Number(), yPct: Type.Number() }), {
  description: 'Outline on the floor plan, vertices in percent of the image, implicitly closed',
});

const ChargeRate = Type.Object(
  { perHour: Type.Number(), perDay: Type.Number(), amount: Type.Optional(Type.Number()) },
  { additionalProperties: true, description: 'Price of the asset in the project currency' },
);

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

const assetCommon = {
  _id: Type.String(),
  name: Type.String(),
  email: Type.String(),
  capacity: Type.Integer(),
  isPublic: Type.Boolean({ description: 'false: only the project\'s members may see and book it' }),
  brandId: Type.String(),
  projectId: Type.String(),
  zoneId: Type.String(),
  floorId: Type.String(),
  facilities: Type.Array(Type.String()),
  pictureUrls: Type.Array(Type.String()),
  chargeRate: ChargeRate,
  config: AssetConfigSchema,
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

export const DeskSchema = Type.Object(
  {
    ...assetCommon,
    index: Type.Integer(),
    status: Type.String({ description: 'active, inactive, in-used, reserved or suspended' }),
  },
  { description: 'A desk' },
);

export const MeetingRoomWithCalendar = Type.Object({ ...MeetingRoomSchema.properties, calendar: CalendarSchema });
export const DeskWithCalendar = Type.Object({ ...DeskSchema.properties, calendar: CalendarSchema });
