/**
 * The API's actor on bookings (and the console's staff cancel): a thin facade over
 * what a caller does — create (meeting-create-service.ts), change (PATCH,
 * meeting-update-service.ts), the actions cancel, check-in and check-out
 * (meeting-action-service.ts), and the reads (meeting-query-service.ts).
 *
 * Every time rule goes through the availability engine (src/modules/booking/rules), every
 * state rule through the meeting rules; the services load, decide with those pure
 * functions, and write through the one booking-change writer. Conflict check and
 * write happen under a per-asset lock, and each change appends its history entry in
 * the same transaction.
 */
import type { Principal } from '../auth/index.js';
import type { MeetingRow } from './meeting-repository.js';
import { MeetingSupport, type MeetingServiceDeps } from './meeting-support.js';
import { MeetingCreateService, type CreateMeetingInput } from './meeting-create-service.js';
import { MeetingUpdateService, type UpdateMeetingInput } from './meeting-update-service.js';
import { MeetingActionService } from './meeting-action-service.js';
import { MeetingQueryService, type ListMeetingsInput } from './meeting-query-service.js';

export type { MeetingServiceDeps } from './meeting-support.js';
export type { CreateMeetingInput } from './meeting-create-service.js';
export { PIN_PATTERN, type UpdateMeetingInput } from './meeting-update-service.js';
export { DEFAULT_MEETING_PAGE_SIZE, type ListMeetingsInput } from './meeting-query-service.js';

export class MeetingService {
  private readonly creating: MeetingCreateService;
  private readonly updating: MeetingUpdateService;
  private readonly actions: MeetingActionService;
  private readonly queries: MeetingQueryService;

  constructor(deps: MeetingServiceDeps) {
    const support = new MeetingSupport(deps);
    this.creating = new MeetingCreateService(support);
    this.updating = new MeetingUpdateService(support);
    this.actions = new MeetingActionService(support);
    this.queries = new MeetingQueryService(support);
  }

  create(p: Principal, input: CreateMeetingInput) {
    return this.creating.create(p, input);
  }

  update(p: Principal, id: string, input: UpdateMeetingInput) {
    return this.updating.update(p, id, input);
  }

  cancel(p: Principal, id: string, input: { pinCode?: string; paymentId?: string }) {
    return this.actions.cancel(p, id, input);
  }

  /** Staff cancel from the operator console (actor `ops`, source `console`); 404 when unknown. */
  staffCancel(id: string, input: { reason?: string }): Promise<MeetingRow> {
    return this.actions.staffCancel(id, input);
  }

  checkIn(p: Principal, id: string, input: { pinCode?: string }) {
    return this.actions.checkIn(p, id, input);
  }

  checkOut(p: Principal, id: string, input: { pinCode?: string }) {
    return this.actions.checkOut(p, id, input);
  }

  get(p: Principal, id: string) {
    return this.queries.get(p, id);
  }

  list(p: Principal, q: ListMeetingsInput) {
    return this.queries.list(p, q);
  }
}
