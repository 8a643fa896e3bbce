/**
 * Desk rows held in memory, checked row by row against the database on every
 * listing. A desk search asks SQL only for the matching ids in listing order with
 * each row's `updated_at` (the filters, visibility and order stay in SQL, so both
 * engines answer as before), and re-reads whole rows only for desks it has not
 * seen or that changed since (site apply stamps `updated_at` on every change).
 * A listing of ~2,000 desks thus costs a narrow index read instead of
 * materializing every column of every row, and a page's views are built once.
 *
 * Config texts are interned: desks sharing a config share one string, so the
 * availability search's per-config memo compares them by identity.
 */
import type { CatalogueRepository, DeskRow, DeskVersion } from './catalogue-repository.js';
import { deskView, type DeskView } from './asset-views.js';

interface DeskEntry {
  row: DeskRow;
  view?: DeskView;
}

/** Distinct config texts kept for interning before the table starts over. */
const MAX_INTERNED = 10_000;

export class DeskSnapshots {
  private readonly byId = new Map<string, DeskEntry>();
  private readonly configs = new Map<string, string>();

  constructor(private readonly repo: CatalogueRepository) {}

  /** The stored rows of the listed desks, in the listing's order (re-reading the changed ones). */
  async rows(listed: readonly DeskVersion[]): Promise<DeskRow[]> {
    const stale = listed.filter((l) => this.byId.get(l.id)?.row.updated_at !== l.updated_at).map((l) => l.id);
    if (stale.length) {
      for (const row of await this.repo.desksByIds(stale)) this.byId.set(row.id, { row: { ...row, config: this.intern(row.config) } });
    }
    const out: DeskRow[] = [];
    for (const l of listed) {
      const entry = this.byId.get(l.id);
      if (entry) out.push(entry.row); // a desk gone between the two reads is left out
    }
    return out;
  }

  /** The Desk view of a row returned by `rows` (built once per version of the row). */
  view(row: DeskRow): DeskView {
    const entry = this.byId.get(row.id);
    if (!entry || entry.row !== row) return deskView(row);
    return (entry.view ??= deskView(row));
  }

  private intern(config: string): string {
    const known = this.configs.get(config);
    if (known !== undefined) return known;
    if (this.configs.size >= MAX_INTERNED) this.configs.clear();
    this.configs.set(config, config);
    return config;
  }
}
