/**
 * What the HTTP tests drive on a calendar provider's stand-in (graph-standin.ts for
 * Microsoft Graph, google-standin.ts for Google Calendar): the provider's API as the
 * service's connector calls it, and a "person" editing events in Outlook or Google
 * Calendar, whose changes the stand-in announces to the subscriptions / channels the
 * way the provider does (automatically unless `autoNotify` is off).
 */

/** An event as the stand-in holds it on one room calendar. */
export interface StandInEvent {
  id: string;
  title: string;
  description: string;
  start: number;
  end: number;
  organizerEmail: string | null;
  attendeeEmails: string[];
  /** The room's own response on its copy, and the comment it gave. */
  roomResponse: 'accepted' | 'declined' | 'tentative' | 'none' | 'organizer';
  roomComment: string | null;
  /** Graph `showAs: tentative` / Google `status: tentative`. */
  tentative: boolean;
  cancelled: boolean;
  /** The booking id the service stored on an event it wrote, or null. */
  bookingId: string | null;
}

export interface StandInSubscription {
  id: string;
  calendarId: string;
  /** Real time (epoch ms). */
  expiresAt: number;
  notificationUrl: string;
  active: boolean;
}

export interface PersonEvent {
  /** The organizer (a person); the room is invited. */
  organizer: { email: string; name: string };
  title: string;
  start: number;
  end: number;
  description?: string;
  /** Other guests (emails). */
  attendees?: string[];
}

export interface CalendarStandIn {
  readonly provider: 'microsoft' | 'google';
  /** The connection's `apiBaseUrl` and `tokenUrl`. */
  readonly apiBaseUrl: string;
  readonly tokenUrl: string;
  /** Credentials the stand-in accepts (put them in the site document's connection). */
  readonly credentials: Record<string, string>;
  /** Announce every change to subscriptions automatically (default true). */
  autoNotify: boolean;
  /** While true, every API and token request answers 503 (the provider is down). */
  down: boolean;
  close(): Promise<void>;
  /** Waits until every notification sent in the background has been answered. */
  settled(): Promise<void>;

  /** A person invites the room (the event lands on the room's calendar, the room not answered yet). Returns the event id. */
  personCreates(calendarId: string, e: PersonEvent): Promise<string>;
  /** A person changes times or title of an event on the room's calendar (one they organized, or one the service wrote). */
  personUpdates(calendarId: string, eventId: string, patch: { start?: number; end?: number; title?: string }): Promise<void>;
  /** A person deletes / cancels the event. */
  personDeletes(calendarId: string, eventId: string): Promise<void>;
  /** Someone declines on the room's copy (a delegate in Outlook / the resource calendar). */
  personDeclinesForRoom(calendarId: string, eventId: string): Promise<void>;
  /** The organizer removes the room from the invitation (the event stays, without the room). */
  personRemovesRoom(calendarId: string, eventId: string): Promise<void>;

  /** The room calendar's events (cancelled ones included, flagged). */
  events(calendarId: string): StandInEvent[];
  subscriptions(): StandInSubscription[];

  /** Sends a change notification for this calendar now (to every active subscription); `token` overrides Graph's clientState / Google's channel token (a forgery). Returns the HTTP statuses the service answered. */
  notify(calendarId: string, opts?: { token?: string }): Promise<number[]>;
  /** Sends the last notification again, unchanged (a duplicate). */
  resendLast(): Promise<number[]>;
  /** Graph: a lifecycle notification; Google: `missed` makes the next sync token invalid and notifies (`exists`). */
  lifecycle(calendarId: string, event: 'missed' | 'subscriptionRemoved' | 'reauthorizationRequired'): Promise<number[]>;
  /** Makes every delta link / sync token of this calendar invalid (the next incremental read answers 410). */
  expireCursors(calendarId: string): void;
  /** Requests received (method, path without query), for assertions. */
  readonly requests: { method: string; path: string; at: number }[];
}
