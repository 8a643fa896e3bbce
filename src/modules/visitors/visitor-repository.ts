/** The visitors module's tables: visitor_invites and visitor_entries. */
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Db } from '../../platform/db/db.js';
import { readInChunks } from '../../platform/db/in-chunks.js';
import type { Backlog } from '../../platform/jobs/handler.js';
import { backlogOf } from '../../platform/db/backlog-row.js';
import type { Database, VisitorEntryTable, VisitorInviteTable } from '../../platform/db/schema.js';
import { sealedTable } from '../../platform/db/sealed-table-repository.js';
import type { SealedTable } from '../../platform/crypto/reseal.js';

/** An invite as the module uses it: `end_given` (the host gave an end time) as a boolean. */
export type InviteRow = Omit<Selectable<VisitorInviteTable>, 'end_given'> & { end_given: boolean };
export type EntryRow = Selectable<VisitorEntryTable>;

const inviteRecord = (r: Selectable<VisitorInviteTable>): InviteRow => ({ ...r, end_given: Number(r.end_given) === 1 });

export class VisitorRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertInvite(invite: InviteRow, db: Db = this.db): Promise<void> {
    await db
      .insertInto('visitor_invites')
      // meeting_id only when set: an invite for no booking writes only what the previous release knew (rolling upgrades).
      .values({ ...withoutNull(invite, 'meeting_id'), end_given: invite.end_given ? 1 : 0 })
      .execute();
  }

  async invite(id: string, db: Db = this.db): Promise<InviteRow | undefined> {
    const row = await db.selectFrom('visitor_invites').selectAll().where('id', '=', id).executeTakeFirst();
    return row && inviteRecord(row);
  }

  /** The sealed QR codes of these invites of the project (one statement per IN_CHUNK invites). */
  async sealedCodes(projectId: string, ids: readonly string[], db: Db = this.db): Promise<Pick<InviteRow, 'id' | 'qr_enc'>[]> {
    return readInChunks(ids, (chunk) =>
      db.selectFrom('visitor_invites').select(['id', 'qr_enc']).where('project_id', '=', projectId).where('id', 'in', chunk).execute(),
    );
  }

  /** Whether an invite of the project holding one of these code tags (one per secrets key) is still in use: not cancelled and its window not over. */
  async tagInUse(projectId: string, qrTags: readonly string[], now: number, db: Db = this.db): Promise<boolean> {
    const row = await db
      .selectFrom('visitor_invites')
      .select('id')
      .where('project_id', '=', projectId)
      .where('qr_tag', 'in', qrTags)
      .where('cancelled_at', 'is', null)
      .where('end_at', '>', now)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The project's invites with one of these code tags (one per secrets key; normally one invite). */
  async byTag(projectId: string, qrTags: readonly string[], db: Db = this.db): Promise<InviteRow[]> {
    return (
      await db
        .selectFrom('visitor_invites')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('qr_tag', 'in', qrTags)
        .orderBy('id')
        .execute()
    ).map(inviteRecord);
  }

  /** The project's invites for this normalized plate (a plate may come back on several visits). */
  async byPlate(projectId: string, plateKey: string, db: Db = this.db): Promise<InviteRow[]> {
    return (
      await db
        .selectFrom('visitor_invites')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('plate_key', '=', plateKey)
        .orderBy('id')
        .execute()
    ).map(inviteRecord);
  }

  /** Marks the invite cancelled (and withdrawn, unless it already is); false when it was already cancelled. */
  async cancel(id: string, at: number, db: Db = this.db): Promise<boolean> {
    const res = await db
      .updateTable('visitor_invites')
      .set({ cancelled_at: at })
      .where('id', '=', id)
      .where('cancelled_at', 'is', null)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return false;
    await db.updateTable('visitor_invites').set({ withdrawn_at: at }).where('id', '=', id).where('withdrawn_at', 'is', null).execute();
    return true;
  }

  /** Marks the invite's code withdrawn from the devices; false when it already was. */
  async withdraw(id: string, at: number, db: Db = this.db): Promise<boolean> {
    const res = await db
      .updateTable('visitor_invites')
      .set({ withdrawn_at: at })
      .where('id', '=', id)
      .where('withdrawn_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Invites whose window is over and whose code is still on the devices, earliest end first. */
  async withdrawalsDue(now: number, limit: number, db: Db = this.db): Promise<InviteRow[]> {
    const rows = await db
      .selectFrom('visitor_invites')
      .selectAll()
      .where('withdrawn_at', 'is', null)
      .where('end_at', '<=', now)
      .orderBy('end_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(inviteRecord);
  }

  /** Invites whose code is due to be withdrawn by `now`: how many, and the earliest end (metrics). */
  async withdrawalsBacklog(now: number, db: Db = this.db): Promise<Backlog> {
    const row = await db
      .selectFrom('visitor_invites')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('end_at').as('oldest')])
      .where('withdrawn_at', 'is', null)
      .where('end_at', '<=', now)
      .executeTakeFirstOrThrow();
    return backlogOf(row);
  }

  /** The invites naming a booking whose code may still be on some device (their door passes follow the booking's window). */
  async ofMeeting(meetingId: string, db: Db = this.db): Promise<{ id: string; projectId: string }[]> {
    const rows = await db
      .selectFrom('visitor_invites')
      .select(['id', 'project_id'])
      .where('meeting_id', '=', meetingId)
      .where('withdrawn_at', 'is', null)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ id: r.id, projectId: r.project_id }));
  }

  /** Ids of the project's invites whose code may still be on some device. */
  async unwithdrawn(projectId: string, db: Db = this.db): Promise<string[]> {
    const rows = await db
      .selectFrom('visitor_invites')
      .select('id')
      .where('project_id', '=', projectId)
      .where('withdrawn_at', 'is', null)
      .orderBy('id')
      .execute();
    return rows.map((r) => r.id);
  }

  async insertEntry(row: Insertable<VisitorEntryTable>, db: Db = this.db): Promise<void> {
    await db.insertInto('visitor_entries').values(row).execute();
  }

  /** A project's invites whose window overlaps [from, to), by start (the console's day list). */
  async invitesBetween(projectId: string, from: number, to: number, db: Db = this.db): Promise<InviteRow[]> {
    const rows = await db
      .selectFrom('visitor_invites')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('start_at', '<', to)
      .where('end_at', '>', from)
      .orderBy('start_at')
      .orderBy('id')
      .limit(1000)
      .execute();
    return rows.map(inviteRecord);
  }

  /** The entries of several invites, oldest first. */
  async entriesOf(inviteIds: string[], db: Db = this.db): Promise<EntryRow[]> {
    if (!inviteIds.length) return [];
    return db.selectFrom('visitor_entries').selectAll().where('invite_id', 'in', inviteIds).orderBy('at').orderBy('id').execute();
  }

  /** Invites created or cancelled after `after`, oldest change first: the console's change feed. */
  async changedSince(after: number, limit: number, db: Db = this.db): Promise<{ id: string; projectId: string; at: number }[]> {
    const rows = await db
      .selectFrom('visitor_invites')
      .select(['id', 'project_id', 'created_at', 'cancelled_at'])
      .where((eb) => eb.or([eb('created_at', '>', after), eb('cancelled_at', '>', after)]))
      .limit(limit)
      .execute();
    return rows
      .map((r) => ({ id: r.id, projectId: r.project_id, at: Math.max(Number(r.created_at), Number(r.cancelled_at ?? 0)) }))
      .sort((a, b) => a.at - b.at);
  }

  /** The latest invite change time (0 when none). */
  async lastChangeAt(db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom('visitor_invites')
      .select((eb) => [eb.fn.max('created_at').as('c'), eb.fn.max('cancelled_at').as('x')])
      .executeTakeFirst();
    return Math.max(Number(row?.c ?? 0), Number(row?.x ?? 0));
  }

  /** The invite's entries, oldest first. */
  async entries(inviteId: string, db: Db = this.db): Promise<EntryRow[]> {
    return db.selectFrom('visitor_entries').selectAll().where('invite_id', '=', inviteId).orderBy('at').orderBy('id').execute();
  }
}

/** The purpose of a visitor code's keyed tag (`SecretBox.tag`): how a scanned code finds its invite. */
export const VISITOR_QR_TAG_PURPOSE = 'visitor-qr';

/** Visitors' sealed columns (SECRETS_KEY rotation): each invite's QR code and its keyed tag. */
export function sealedVisitorColumns(db: Kysely<Database>): SealedTable[] {
  return [
    sealedTable(db, {
      table: 'visitor_invites',
      key: ['id'],
      sealed: ['qr_enc'],
      tags: [{ column: 'qr_tag', of: 'qr_enc', purpose: VISITOR_QR_TAG_PURPOSE }],
    }),
  ];
}

/** `row` without `key` when that is null. */
function withoutNull<T extends object, K extends keyof T>(row: T, key: K): T | Omit<T, K> {
  if (row[key] !== null) return row;
  const { [key]: _dropped, ...rest } = row;
  return rest;
}
