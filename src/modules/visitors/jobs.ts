/**
 * The visitors module's background work, as a handler of the one job runner:
 * `visitor-expiry` withdraws the code of every invite whose window is over (the
 * service records the access change `expired` and marks it withdrawn, in one
 * transaction); replayed in time order when the sandbox clock moves.
 */
import type { JobHandler } from '../../platform/jobs/handler.js';
import { timedJob } from '../../platform/jobs/timed.js';
import type { InviteRow } from './visitor-repository.js';
import type { VisitorService } from './visitor-service.js';

export const VISITOR_EXPIRY_JOB = 'visitor-expiry';

export function visitorExpiryJob(visitors: VisitorService, intervalMs = 1000): JobHandler<InviteRow> {
  return timedJob<InviteRow>({
    name: VISITOR_EXPIRY_JOB,
    intervalMs,
    id: (i) => i.id,
    dueAt: (i) => i.end_at,
    due: (now, limit) => visitors.withdrawalsDue(now, limit),
    backlog: (now) => visitors.withdrawalsBacklog(now),
    run: (i) => visitors.withdraw(i),
  });
}
