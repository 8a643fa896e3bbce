/**
 * Desk listings held in memory. The filters, visibility and order of a listing
 * stay in SQL (both engines answer as before): a listing asks only for the matching
 * ids in order with each row's `updated_at`, and whole rows are re-read only for
 * desks not seen yet or changed since (site apply stamps `updated_at` on every
 * change). A listing is then kept per filter and reused for as long as the desks
 * of its projects are unchanged, which a cheap count/latest-update probe tells on
 * every search (the same probe as the room snapshots, so every instance sees
 * changes made through any other). A search over ~2,000 desks thus costs one
 * aggregate read instead of materializing every row, and a page's views are built
 * once per version of each desk.
 *
 * Desks sharing a config share one parsed config (the repository parses each
 * distinct text once), as the room snapshots' do.
 */
import type { CatalogueRepository, DeskFilter, DeskRow, DeskVersion } from './catalogue-repository.js';
import { deskView, type DeskView } from './asset-views.js';

interface DeskEntry {
  row: DeskRow;
  view?: DeskView;
}

/** Listings kept (distinct filters), least recently used out first. */
const MAX_LISTINGS = 64;

export class DeskSnapshots {
  private readonly byId = new Map<string, DeskEntry>();
  private readonly listings = new Map<string, { version: string; rows: DeskRow[] }>();

  constructor(private readonly repo: CatalogueRepository) {}

  /** The desks matching the filter, in listing order (see CatalogueRepository.deskVersions). */
  async listing(filter: DeskFilter): Promise<DeskRow[]> {
    if (!filter.projectIds.length) return [];
    const key = JSON.stringify(filter);
    // Probed before the listing is read: a change committed in between leaves the
    // listing stored under the older version, so the next search reads it again.
    const version = await this.repo.desksVersion(filter.projectIds);
    const hit = this.listings.get(key);
    if (hit) {
      this.listings.delete(key); // most recently used moves to the back
      if (hit.version === version) {
        this.listings.set(key, hit);
        return hit.rows;
      }
    }
    const rows = await this.rows(await this.repo.deskVersions(filter));
    if (this.listings.size >= MAX_LISTINGS) this.listings.delete(this.listings.keys().next().value!);
    this.listings.set(key, { version, rows });
    return rows;
  }

  /** The Desk view of a row returned by `listing` (built once per version of the row). */
  view(row: DeskRow): DeskView {
    const entry = this.byId.get(row.id);
    if (!entry || entry.row !== row) return deskView(row);
    return (entry.view ??= deskView(row));
  }

  /** The stored rows of the listed desks, in the listing's order (re-reading the changed ones). */
  private async rows(listed: readonly DeskVersion[]): Promise<DeskRow[]> {
    const stale = listed.filter((l) => this.byId.get(l.id)?.row.updated_at !== l.updated_at).map((l) => l.id);
    if (stale.length) {
      for (const row of await this.repo.desksByIds(stale)) this.byId.set(row.id, { row });
    }
    const out: DeskRow[] = [];
    for (const l of listed) {
      const entry = this.byId.get(l.id);
      if (entry) out.push(entry.row); // a desk gone between the two reads is left out
    }
    return out;
  }
}
