/**
 * BookingClient: one method per public operation of the API, over the Transport
 * (retries) and a token source (app token, or a member's act_as token through
 * `actingAs`). Methods answer the envelope's `data` (lists: `{items, meta}`).
 */
import type {
  CalendarQuery,
  PageMeta,
  CancelBody,
  CreateMeetingBody,
  CredentialsBody,
  CredentialsResult,
  Desk,
  DeskQuery,
  DeskWithCalendar,
  DraftResult,
  HealthStatus,
  ListMeetingsQuery,
  Meeting,
  MeetingRoomSearchResult,
  MeetingRoomWithCalendar,
  Page,
  PartnerMember,
  PinBody,
  PutMemberBody,
  PutMemberResult,
  Revoked,
  RoomQuery,
  SubjectType,
  TokenRequest,
  TokenResponse,
  UpdateMeetingBody,
  WhoAmI,
} from './types.js';
import { BookingApiError } from './errors.js';
import { enveloped, Transport, type CallOptions, type TransportOptions } from './transport.js';
import { ActAsTokens, AppTokens, requestToken, type AppCredentials, type AppTokensOptions, type StoredTokens } from './tokens.js';
import { createMeetingSafely, dedupeOccurrences, reReadThen, type CreateSafelyOptions } from './helpers.js';

export interface BookingClientOptions extends TransportOptions, AppTokensOptions {
  appId: string;
  appSecret: string;
}

const seg = (s: string) => encodeURIComponent(s);

/** Every public operation of the API (as /openapi.json names it) and the method that calls it. */
export const OPERATIONS = {
  'GET /healthz': 'health',
  'GET /readyz': 'ready',
  'POST /auth/accessToken': 'requestToken',
  'POST /auth/revoke': 'revoke',
  'GET /auth/whoami': 'whoami',
  'GET /meeting-rooms': 'searchRooms',
  'GET /meeting-rooms/{id}': 'getRoom',
  'GET /desks': 'searchDesks',
  'GET /desks/{id}': 'getDesk',
  'POST /meetings': 'createMeeting',
  'GET /meetings': 'listMeetings',
  'GET /meetings/{id}': 'getMeeting',
  'PATCH /meetings/{id}': 'updateMeeting',
  'POST /meetings/{id}/cancel': 'cancelMeeting',
  'POST /meetings/{id}/check-in': 'checkIn',
  'POST /meetings/{id}/check-out': 'checkOut',
  'PUT /partner/members/{externalUserId}': 'putMember',
  'GET /partner/members/{externalUserId}': 'getMember',
  'DELETE /partner/members/{externalUserId}': 'deleteMember',
  'PUT /partner/members/{externalUserId}/credentials': 'putCredentials',
} as const;

export class BookingClient {
  readonly transport: Transport;
  /** The token source of this client (app token, or act_as for `actingAs` clients). */
  readonly tokens: AppTokens | ActAsTokens;
  private readonly credentials: AppCredentials;
  private readonly delegated: Map<string, BookingClient>;

  constructor(options: BookingClientOptions);
  constructor(
    options: BookingClientOptions,
    internal: { transport: Transport; tokens: AppTokens | ActAsTokens; delegated: Map<string, BookingClient> },
  );
  constructor(
    options: BookingClientOptions,
    internal?: { transport: Transport; tokens: AppTokens | ActAsTokens; delegated: Map<string, BookingClient> },
  ) {
    this.credentials = { appId: options.appId, appSecret: options.appSecret };
    this.transport = internal?.transport ?? new Transport(options);
    this.tokens = internal?.tokens ?? new AppTokens(this.transport, this.credentials, options);
    this.delegated = internal?.delegated ?? new Map<string, BookingClient>();
    this.options = options;
  }

  private readonly options: BookingClientOptions;

  /**
   * A client acting for one member (act_as): same transport, its own delegated
   * token, obtained again when it expires. One client (and token) per subject.
   */
  actingAs(subject: string, subjectType: SubjectType = 'external_user_id'): BookingClient {
    const key = `${subjectType}:${subject}`;
    let c = this.delegated.get(key);
    if (!c) {
      c = new BookingClient(this.options, {
        transport: this.transport,
        tokens: new ActAsTokens(this.transport, this.credentials, subject, subjectType),
        delegated: this.delegated,
      });
      this.delegated.set(key, c);
    }
    return c;
  }

  /** The tokens held now (persist them with `onTokens`; restore with `initial`). */
  currentTokens(): StoredTokens | undefined {
    return this.tokens.tokens;
  }

  // --- probes --------------------------------------------------------------

  /** GET /healthz */
  async health(): Promise<HealthStatus> {
    return this.data({ method: 'GET', path: '/healthz', auth: null });
  }

  /** GET /readyz */
  async ready(): Promise<HealthStatus> {
    return this.data({ method: 'GET', path: '/readyz', auth: null });
  }

  // --- auth ------------------------------------------------------------------

  /** POST /auth/accessToken with any grant, raw (the token sources call this for you). */
  requestToken(body: TokenRequest): Promise<TokenResponse> {
    return requestToken(this.transport, body);
  }

  /** POST /auth/accessToken, app_credentials grant, raw. */
  grantAppCredentials(): Promise<TokenResponse> {
    return this.requestToken({ grant_type: 'app_credentials', app_id: this.credentials.appId, app_secret: this.credentials.appSecret });
  }

  /** POST /auth/accessToken, refresh_token grant, raw (store the new pair: the old refresh token is spent). */
  grantRefresh(refreshToken: string): Promise<TokenResponse> {
    return this.requestToken({ grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  /** POST /auth/accessToken, act_as grant, raw. */
  grantActAs(subject: string, subjectType: SubjectType = 'external_user_id'): Promise<TokenResponse> {
    return this.requestToken({
      grant_type: 'act_as',
      app_id: this.credentials.appId,
      app_secret: this.credentials.appSecret,
      subject,
      subject_type: subjectType,
    });
  }

  /** POST /auth/revoke: revokes this client's token and its refresh chain; the client forgets them. */
  async revoke(): Promise<Revoked> {
    const held = this.tokens.tokens;
    if (!held) return { revoked: false };
    const token = held.accessToken;
    // Revoke exactly the token held (a fresh one must not be obtained just to revoke it).
    const answer = await this.transport.call({
      method: 'POST',
      path: '/auth/revoke',
      auth: { token: async () => token, invalidate: () => {} },
    });
    this.tokens.clear();
    return enveloped<Revoked>(answer).data;
  }

  /** GET /auth/whoami */
  whoami(): Promise<WhoAmI> {
    return this.data({ method: 'GET', path: '/auth/whoami' });
  }

  // --- catalogue ---------------------------------------------------------

  /** GET /meeting-rooms (unpaginated). */
  searchRooms(query: RoomQuery): Promise<MeetingRoomSearchResult> {
    return this.data({ method: 'GET', path: '/meeting-rooms', query });
  }

  /** GET /meeting-rooms/{id} with its booking calendar. */
  getRoom(id: string, query: CalendarQuery = {}): Promise<MeetingRoomWithCalendar> {
    return this.data({ method: 'GET', path: `/meeting-rooms/${seg(id)}`, query });
  }

  /** GET /desks (paginated). */
  searchDesks(query: DeskQuery = {}): Promise<Page<Desk>> {
    return this.page({ method: 'GET', path: '/desks', query });
  }

  /** GET /desks/{id} with its booking calendar. */
  getDesk(id: string, query: CalendarQuery = {}): Promise<DeskWithCalendar> {
    return this.data({ method: 'GET', path: `/desks/${seg(id)}`, query });
  }

  // --- meetings ----------------------------------------------------------

  /**
   * POST /meetings, the safe way: a failure that may have booked anyway (no
   * answer, 5xx other than KS234) is reconciled through GET /meetings and only
   * resent when nothing was booked. See createMeetingSafely.
   */
  createMeeting(body: CreateMeetingBody, options: CreateSafelyOptions = {}): Promise<Meeting> {
    return createMeetingSafely(this, body, options);
  }

  /**
   * One POST /meetings: retried only on answers that say nothing was done (429,
   * 503 KS234). Any other failure is thrown as is; prefer createMeeting.
   */
  async createMeetingOnce(body: CreateMeetingBody): Promise<Meeting> {
    return this.data({ method: 'POST', path: '/meetings', body: { ...body, draft: false }, retry: 'unprocessed' });
  }

  /** POST /meetings with draft: true: availability and price, nothing booked (safe to retry). */
  draftMeeting(body: Omit<CreateMeetingBody, 'draft'>): Promise<DraftResult> {
    return this.data({ method: 'POST', path: '/meetings', body: { ...body, draft: true } });
  }

  /** GET /meetings (paginated). Recurring series give one row per occurrence: see dedupeOccurrences. */
  listMeetings(query: ListMeetingsQuery): Promise<Page<Meeting>> {
    return this.page({ method: 'GET', path: '/meetings', query });
  }

  /** Every page of GET /meetings, occurrences de-duplicated on occurrenceEventId. */
  async listAllMeetings(query: Omit<ListMeetingsQuery, 'offset'>): Promise<Meeting[]> {
    const limit = query.limit || 500;
    const rows: Meeting[] = [];
    for (let offset = 0; ; offset += limit) {
      const page = await this.listMeetings({ ...query, limit, offset });
      rows.push(...page.items);
      if (page.items.length < limit || offset + limit >= page.meta.total) break;
    }
    return dedupeOccurrences(rows);
  }

  /** GET /meetings/{id} */
  getMeeting(id: string): Promise<Meeting> {
    return this.data({ method: 'GET', path: `/meetings/${seg(id)}` });
  }

  /** PATCH /meetings/{id} */
  updateMeeting(id: string, body: UpdateMeetingBody): Promise<Meeting> {
    return this.data({ method: 'PATCH', path: `/meetings/${seg(id)}`, body });
  }

  /** POST /meetings/{id}/cancel (202) */
  cancelMeeting(id: string, body: CancelBody = {}): Promise<Meeting> {
    return this.action(id, 'cancel', body, 'cancelled');
  }

  /** POST /meetings/{id}/check-in (202). MEETING_040/041 throw ComeBackLaterError. */
  checkIn(id: string, body: PinBody = {}): Promise<Meeting> {
    return this.action(id, 'check-in', body, 'checked-in');
  }

  /** POST /meetings/{id}/check-out (202) */
  checkOut(id: string, body: PinBody = {}): Promise<Meeting> {
    return this.action(id, 'check-out', body, 'done');
  }

  /** Reads the booking again, then acts on the fresh state (statuses change without any call). */
  reReadThen<T>(id: string, action: (fresh: Meeting, client: BookingClient) => Promise<T> | T): Promise<T> {
    return reReadThen(this, id, action);
  }

  // --- partner members (plain app token only) -------------------------

  /** PUT /partner/members/{externalUserId} (idempotent create or update). */
  putMember(externalUserId: string, body: PutMemberBody): Promise<PutMemberResult> {
    return this.data({ method: 'PUT', path: `/partner/members/${seg(externalUserId)}`, body });
  }

  /** GET /partner/members/{externalUserId} */
  getMember(externalUserId: string): Promise<PartnerMember> {
    return this.data({ method: 'GET', path: `/partner/members/${seg(externalUserId)}` });
  }

  /** DELETE /partner/members/{externalUserId} (204; idempotent offboarding). */
  async deleteMember(externalUserId: string): Promise<void> {
    await this.transport.call({ method: 'DELETE', path: `/partner/members/${seg(externalUserId)}`, auth: this.tokens });
  }

  /** PUT /partner/members/{externalUserId}/credentials (cards and face, declaratively). */
  putCredentials(externalUserId: string, body: CredentialsBody): Promise<CredentialsResult> {
    return this.data({ method: 'PUT', path: `/partner/members/${seg(externalUserId)}/credentials`, body });
  }

  // --- plumbing ------------------------------------------------------------

  /**
   * A state action. When it was retried after a failure that may have acted (no
   * answer, 5xx) and the retry is refused for the state (409/404/422), the booking
   * is read again: already in the target state means the first attempt did it.
   */
  private async action(id: string, name: 'cancel' | 'check-in' | 'check-out', body: object, target: string): Promise<Meeting> {
    try {
      return await this.data<Meeting>({ method: 'POST', path: `/meetings/${seg(id)}/${name}`, body });
    } catch (err) {
      if (!(err instanceof BookingApiError) || !err.afterAmbiguousAttempt || ![404, 409, 422].includes(err.status)) throw err;
      const fresh = await this.getMeeting(id);
      if (fresh.status === target) return fresh;
      throw err;
    }
  }

  private async data<T>(o: Omit<CallOptions, 'auth'> & { auth?: CallOptions['auth'] }): Promise<T> {
    const answer = await this.transport.call({ ...o, auth: o.auth === undefined ? this.tokens : o.auth });
    return enveloped<T>(answer).data;
  }

  private async page<T>(o: Omit<CallOptions, 'auth'>): Promise<Page<T>> {
    const answer = await this.transport.call({ ...o, auth: this.tokens });
    const { data, meta } = enveloped<T[], PageMeta>(answer);
    return { items: data, meta };
  }
}
