/** PLACEHOLDER until the iTIP layer lands (branch itip): types and signatures only. */
export interface ItipAttendee { email: string; name: string | null; partstat: string; role: string | null; cutype: string | null }
export interface ItipEvent {
  uid: string;
  recurrenceId: number | null;
  sequence: number;
  dtstamp: number | null;
  summary: string;
  description: string;
  location: string | null;
  start: number;
  end: number;
  allDay: boolean;
  startDate: string | null;
  endDate: string | null;
  floating: boolean;
  startLocal: string | null;
  endLocal: string | null;
  timeZone: string | null;
  organizer: { email: string; name: string | null } | null;
  attendees: ItipAttendee[];
  rrule: string | null;
  exdates: number[];
  status: string | null;
}
export interface ItipMessage { method: string; prodId: string | null; events: ItipEvent[] }
export type ItipParse = { ok: true; message: ItipMessage } | { ok: false; errors: string[] };
export function parseItip(_text: string): ItipParse {
  throw new Error('not yet');
}
export interface ReplyInput {
  uid: string;
  recurrenceId?: number | null;
  sequence: number;
  summary?: string;
  start?: number;
  end?: number;
  roomEmail: string;
  roomName: string;
  organizer: { email: string; name: string | null } | null;
  partstat: 'ACCEPTED' | 'DECLINED';
  comment: string;
  now: number;
  prodId?: string;
}
export function buildReply(_input: ReplyInput): string {
  throw new Error('not yet');
}
export function messageHash(_text: string): string {
  throw new Error('not yet');
}
