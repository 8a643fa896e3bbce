/**
 * Who a history entry's `by` is, for a reader: a member, an app, the staff (the
 * operator console), the service itself (its clock: no-shows, lapsed payments,
 * check-in not required) or a calendar without a known organizer. Pure: the
 * names of the user and app ids are looked up by the caller and handed in.
 */
import type { HistoryActorKind } from '../../../contract/ops-console.js';

/** What the caller knows about an id that appears as `by`: a user's name, or an app's (service user or client id). */
export interface KnownActor {
  name: string;
  app: boolean;
}

export function historyActor(
  by: string,
  source: string,
  known: ReadonlyMap<string, KnownActor>,
): { actorKind: HistoryActorKind; actorName: string | null } {
  if (by === 'ops') return { actorKind: 'staff', actorName: null };
  if (by === 'system') return { actorKind: 'system', actorName: null };
  if (by === 'calendar') return { actorKind: 'calendar', actorName: null };
  const k = known.get(by);
  const actorKind = source === 'partner' || k?.app ? 'app' : 'member';
  return { actorKind, actorName: k?.name ?? null };
}
