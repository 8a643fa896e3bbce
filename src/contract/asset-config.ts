/**
 * Asset `config` of rooms and desks (api-spec "Asset config"): the booking rules
 * of one asset. `AssetConfig` is the one definition of its shape: the site
 * document accepts exactly it, it is stored as given, and the booking rules read
 * its `Static` type. `AssetConfigView` is how rooms and desks serve it.
 */
import { Type, type Static } from 'typebox';

/** "HH:mm" or "HH:mm:ss"; "24:00[:00]" is accepted as end of day. */
const WallClock = (description: string) =>
  Type.String({ pattern: '^(?:(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9])?|24:00(?::00)?)$', description });

export const TimeRange = Type.Object(
  { start: WallClock('Start, property-local "HH:mm" or "HH:mm:ss"'), end: WallClock('End, property-local "HH:mm" or "HH:mm:ss"') },
  { additionalProperties: false, description: 'A wall-clock range within one day' },
);
export type TimeRange = Static<typeof TimeRange>;

export const DayConfig = Type.Object(
  {
    availableTime: TimeRange,
    breakTimes: Type.Optional(
      Type.Array(TimeRange, { maxItems: 100, description: 'Ranges within the open hours when booking is blocked' }),
    ),
  },
  { additionalProperties: false, description: 'Operating hours of one weekday' },
);
export type DayConfig = Static<typeof DayConfig>;

const Tick = (description: string) =>
  Type.Optional(
    Type.Integer({
      minimum: -1,
      maximum: 10_080,
      description: `${description}; -1 disables it, absent means the default; at most a week (10080)`,
    }),
  );

/** Minutes; absent = default; -1 disables that tick. */
export const MeetingConfig = Type.Object(
  {
    preStartMinutes: Tick('Minutes before start when check-in opens and the reminder is sent (default 15)'),
    postStartWarnMinutes: Tick('Minutes after start for the no-show warning (default 10)'),
    postStartExpireMinutes: Tick('Minutes after start for the no-show auto-cancel (default 15; 0 = no check-in needed)'),
    preEndMinutes: Tick('Minutes before end for the ending-soon notice (default 15)'),
  },
  { additionalProperties: false, description: 'Timing of notices and automatic transitions' },
);
export type MeetingConfig = Static<typeof MeetingConfig>;

export const AssetConfig = Type.Object(
  {
    dayConfig: Type.Optional(
      Type.Object(
        {
          Mon: Type.Optional(DayConfig),
          Tue: Type.Optional(DayConfig),
          Wed: Type.Optional(DayConfig),
          Thu: Type.Optional(DayConfig),
          Fri: Type.Optional(DayConfig),
          Sat: Type.Optional(DayConfig),
          Sun: Type.Optional(DayConfig),
        },
        { additionalProperties: false, description: 'Operating hours per weekday; a weekday left out is not bookable' },
      ),
    ),
    start: Type.Optional(WallClock('Legacy opening time for every day (used only without dayConfig)')),
    end: Type.Optional(WallClock('Legacy closing time for every day (used only without dayConfig)')),
    minimumLeadTime: Type.Optional(
      Type.Object(
        {
          minutes: Type.Optional(Type.Integer({ minimum: 0, maximum: 527_040 })),
          hours: Type.Optional(Type.Integer({ minimum: 0, maximum: 8_784 })),
          days: Type.Optional(Type.Integer({ minimum: 0, maximum: 366 })),
        },
        { additionalProperties: false, description: 'Notice a booking needs before it starts (the parts add up)' },
      ),
    ),
    maxAdvanceBookingDays: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 3_660, description: 'How many days ahead a booking may start (at most about ten years)' }),
    ),
    maxDurationMinutes: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 527_040, description: 'Longest allowed booking, in minutes (at most 366 days)' }),
    ),
    bookMultipleDayRoom: Type.Optional(Type.Boolean({ description: 'Whether one booking may cover several days' })),
    meetingConfig: Type.Optional(MeetingConfig),
  },
  { additionalProperties: false, description: 'Booking rules of a room or desk (api-spec "Asset config"); default {}' },
);
export type AssetConfig = Static<typeof AssetConfig>;

// The served form: the same fields as AssetConfig, documented loosely and open to
// further keys. Kept apart so the response schema (and its serialization) stays as published.
const Clock = Type.String({ description: 'Property-local wall-clock time, HH:mm:ss' });
const Range = Type.Object({ start: Clock, end: Clock });

const DayConfigView = Type.Object({
  availableTime: Range,
  breakTimes: Type.Optional(Type.Array(Range, { description: 'Booking is refused when it overlaps a break' })),
});

export const AssetConfigView = Type.Object(
  {
    dayConfig: Type.Optional(
      Type.Record(Type.String(), DayConfigView, {
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
export type AssetConfigView = Static<typeof AssetConfigView>;
