/**
 * Request and response types of the API, taken from the same TypeBox schemas the
 * service validates with (src/contract). Type-only imports: nothing of the
 * server is loaded at run time.
 */
import type { Static } from 'typebox';
import type { TokenRequest, TokenResponse, Revoked, WhoAmI } from '../../src/contract/auth.js';
import type { HealthStatus } from '../../src/contract/common.js';
import type { ErrorEnvelope, PageMeta } from '../../src/contract/envelope.js';
import type {
  CalendarQuery,
  Desk,
  DeskQuery,
  DeskWithCalendar,
  MeetingRoom,
  MeetingRoomList,
  MeetingRoomWithCalendar,
  RoomQuery,
} from '../../src/contract/catalogue.js';
import type {
  CancelBody,
  CreateMeetingBody,
  DraftResult,
  ListMeetingsQuery,
  Meeting,
  MeetingStatus,
  PinBody,
  UpdateMeetingBody,
} from '../../src/contract/meetings.js';
import type { PartnerMember, PutMemberBody, PutMemberResult } from '../../src/contract/members.js';
import type { CredentialsBody, CredentialsResult } from '../../src/contract/member-credentials.js';
import type {
  BookEventData,
  BookingEventKind,
  CancelEventData,
  EndingSoonEventData,
  EventDelivery,
  ModifyEventData,
  NoShowWarningEventData,
  PaymentDueEventData,
  ReminderEventData,
  VmsHostCancelledData,
  VmsInviteSentData,
  VmsVisitorCheckedInData,
} from '../../src/contract/events.js';

export type {
  TokenRequest,
  TokenResponse,
  Revoked,
  WhoAmI,
  HealthStatus,
  ErrorEnvelope,
  PageMeta,
  CalendarQuery,
  Desk,
  DeskWithCalendar,
  MeetingRoom,
  MeetingRoomWithCalendar,
  RoomQuery,
  DeskQuery,
  CancelBody,
  CreateMeetingBody,
  DraftResult,
  ListMeetingsQuery,
  Meeting,
  MeetingStatus,
  PinBody,
  UpdateMeetingBody,
  PartnerMember,
  PutMemberBody,
  PutMemberResult,
  CredentialsBody,
  CredentialsResult,
  BookEventData,
  CancelEventData,
  EndingSoonEventData,
  ModifyEventData,
  NoShowWarningEventData,
  PaymentDueEventData,
  ReminderEventData,
  VmsHostCancelledData,
  VmsInviteSentData,
  VmsVisitorCheckedInData,
};

/** The desk statuses a search may filter on. */
export type DeskStatus = NonNullable<DeskQuery['status']>;

/** GET /meeting-rooms: the unpaginated list. */
export type MeetingRoomSearchResult = Static<typeof MeetingRoomList>;

/** A page of a paginated list (GET /desks, GET /meetings). */
export interface Page<T> {
  items: T[];
  meta: PageMeta;
}

/** The two subject types of the act_as grant. */
export type SubjectType = 'external_user_id' | 'service_member_id';

interface BookingKindData {
  BOOK: BookEventData;
  MODIFY: ModifyEventData;
  CANCEL: CancelEventData;
  REMINDER: ReminderEventData;
  NO_SHOW_WARNING: NoShowWarningEventData;
  ENDING_SOON: EndingSoonEventData;
  PAYMENT_DUE: PaymentDueEventData;
}

/** `data` of each event type of the catalogue. */
export type EventDataByType = {
  [K in BookingEventKind as `ROOM_${K}` | `DESK_${K}`]: BookingKindData[K];
} & {
  VMS_INVITE_SENT: VmsInviteSentData;
  VMS_VISITOR_CHECKED_IN: VmsVisitorCheckedInData;
  VMS_HOST_CANCELLED: VmsHostCancelledData;
};

export type WebhookEventType = keyof EventDataByType;

/**
 * A verified delivery, narrowed on `type`. Unknown fields may appear (the
 * interface is additive); an event type this SDK does not know yet is passed
 * through with its `type` string as is.
 */
export type WebhookEvent = {
  [T in WebhookEventType]: Omit<EventDelivery, 'type' | 'data'> & { type: T; data: EventDataByType[T] };
}[WebhookEventType];
