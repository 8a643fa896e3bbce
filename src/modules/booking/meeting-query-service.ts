/** GET /meetings and GET /meetings/{id}: the bookings a caller may see, as they see them. */
import type { Principal } from '../auth/index.js';
import { hasPermission } from '../auth/index.js';
import { errors } from '../../platform/errors.js';
import { MEETING_UPDATE, canSee, mayReadPin } from './meeting-access.js';
import { listedRows, meetingView } from './meeting-view.js';
import type { Static } from 'typebox';
import type { ListMeetingsQuery } from '../../contract/meetings.js';
import { parseInstant } from '../../platform/time/instant.js';
import { forCaller, type MeetingSupport } from './meeting-support.js';

export type ListMeetingsInput = Static<typeof ListMeetingsQuery>;

export const DEFAULT_MEETING_PAGE_SIZE = 100;

export class MeetingQueryService {
  constructor(private readonly s: MeetingSupport) {}

  async get(p: Principal, id: string) {
    const appUser = this.s.appUserForRead(p);
    return this.s.view(p, await this.s.visible(p, id, appUser), appUser);
  }

  async list(p: Principal, q: ListMeetingsInput) {
    const from = parseInstant(q.from, 'query.from');
    const to = parseInstant(q.to, 'query.to');
    if (to <= from) throw errors.validation(['query.to must be after query.from']);
    if (q.projectId && !p.projects.has(q.projectId)) throw errors.forbidden('You do not have access to this project');
    const appUser = this.s.appUserForRead(p);
    const assetIds = [q.meetingRoomId, q.deskId, ...(q.meetingRoomIds ?? []), ...(q.deskIds ?? [])].filter((x): x is string => !!x);
    const { meetings, secretBox, clock } = this.s.deps;
    const rows = await meetings.list({
      from,
      to,
      projectIds: q.projectId ? [q.projectId] : [...p.projects.keys()],
      participantUserId: p.kind === 'member' ? p.userId! : undefined,
      unrestrictedProjectIds: [...p.projects.keys()].filter((id) => hasPermission(p, id, MEETING_UPDATE)),
      assetIds: assetIds.length ? assetIds : undefined,
      organizerIds: q.organizerId ? [q.organizerId] : undefined,
      organizerEmails: q.organizerEmails,
      attendeeEmails: q.attendeeEmails,
      statuses: q.statuses,
    });
    const visibleRows = rows.filter((m) => canSee(p, m, appUser));
    // Every occurrence of a series, held or cancelled on its own, under its own status.
    const now = clock.now();
    const expanded = listedRows(visibleRows, { from, to }, q.statuses, now);
    const limit = q.limit ?? DEFAULT_MEETING_PAGE_SIZE;
    const offset = q.offset ?? 0;
    const page = expanded.slice(offset, offset + limit);
    const ids = [...new Set(page.map((r) => r.m.id))];
    const histories = await meetings.histories(ids);
    const names = new Map<string, string>();
    for (const r of page) if (!names.has(r.m.asset_id)) names.set(r.m.asset_id, await this.s.assetName(r.m));
    const items = page.map((r) =>
      forCaller(
        p,
        r.m,
        meetingView(r.m, {
          assetName: names.get(r.m.asset_id)!,
          histories: histories.get(r.m.id) ?? [],
          pinCode: mayReadPin(p, r.m, appUser) ? secretBox.open(r.m.pin_enc) : null,
          now,
          occurrence: r.occurrence,
        }),
      ),
    );
    return { items, meta: { limit, offset, total: expanded.length } };
  }
}
