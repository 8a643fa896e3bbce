/** Bookings: the GET /ops/v1/meetings filters (dates, statuses, text, project, room/desk), paged, with staff cancel. */
import { useState } from 'preact/hooks';
import { getPage, MEETING_STATUSES, serviceNow, type Meeting, type PageMeta } from '../api.js';
import { addDays, localDate, localInstant, span, dateTime } from '../format.js';
import { label, useI18n } from '../i18n.js';
import { useLiveChanges } from '../live.js';
import { useSite, zoneOf } from '../site.js';
import { DataTable, ProjectOptions, Show, StatusBadge, useLoad, type Column } from '../ui.js';
import { CancelBooking } from './booking-detail.js';

const PAGE = 25;

interface Filters {
  from: string;
  to: string;
  statuses: string[];
  search: string;
  projectId: string;
  assetId: string;
  offset: number;
}

function readFilters(q: URLSearchParams, today: string): Filters {
  return {
    from: q.get('from') || today,
    to: q.get('to') || addDays(today, 7),
    statuses: q.getAll('status'),
    search: q.get('search') ?? '',
    projectId: q.get('projectId') ?? '',
    assetId: q.get('assetId') ?? '',
    offset: Number(q.get('offset') ?? 0) || 0,
  };
}

function writeFilters(f: Filters): void {
  const q = new URLSearchParams();
  q.set('from', f.from);
  q.set('to', f.to);
  for (const s of f.statuses) q.append('status', s);
  if (f.search) q.set('search', f.search);
  if (f.projectId) q.set('projectId', f.projectId);
  if (f.assetId) q.set('assetId', f.assetId);
  if (f.offset) q.set('offset', String(f.offset));
  location.hash = `#/bookings?${q.toString()}`;
}

/** The bookings screen once it knows the service's today (the default range starts there: the sandbox clock may run far ahead of the browser's). */
export function Bookings({ query }: { query: URLSearchParams }) {
  const { site } = useSite();
  const tz = zoneOf(site);
  const needsToday = !query.get('from') || !query.get('to');
  const today = useLoad(async () => (needsToday ? localDate(await serviceNow(), tz) : ''), [tz, needsToday]);
  useLiveChanges(['clock'], today.reload);
  return <Show value={today}>{(day) => <BookingsFor key={day} query={query} today={day} tz={tz} />}</Show>;
}

/** The filter form: edits a copy of the applied filters; Apply writes them to the address (back to the first page). */
function BookingFilters({ applied }: { applied: Filters }) {
  const { t } = useI18n();
  const { site } = useSite();
  const [form, setForm] = useState<Filters>(applied);
  const set = (patch: Partial<Filters>) => setForm((f) => ({ ...f, ...patch }));
  const submit = (e: Event) => {
    e.preventDefault();
    writeFilters({ ...form, offset: 0 });
  };
  const assets = [...site.rooms, ...site.desks].filter((a) => !form.projectId || a.projectId === form.projectId);
  return (
    <form class="card filters" onSubmit={submit} role="search">
      <label>
        <span>{t('search')}</span>
        <input
          type="search"
          value={form.search}
          placeholder={t('searchPlaceholder')}
          onInput={(e) => set({ search: (e.target as HTMLInputElement).value })}
        />
      </label>
      <label>
        <span>{t('from')}</span>
        <input type="date" required value={form.from} onInput={(e) => set({ from: (e.target as HTMLInputElement).value })} />
      </label>
      <label>
        <span>{t('to')}</span>
        <input type="date" required value={form.to} onInput={(e) => set({ to: (e.target as HTMLInputElement).value })} />
      </label>
      <label>
        <span>{t('project')}</span>
        <select value={form.projectId} onChange={(e) => set({ projectId: (e.target as HTMLSelectElement).value, assetId: '' })}>
          <option value="">{t('allProjects')}</option>
          <ProjectOptions projects={site.projects} />
        </select>
      </label>
      <label>
        <span>{t('asset')}</span>
        <select value={form.assetId} onChange={(e) => set({ assetId: (e.target as HTMLSelectElement).value })}>
          <option value="">{t('allAssets')}</option>
          {assets.map((a) => (
            <option key={a._id} value={a._id}>
              {a.name}
            </option>
          ))}
        </select>
      </label>
      <fieldset class="statuses">
        <legend>{t('statuses')}</legend>
        {MEETING_STATUSES.map((s) => (
          <label key={s} class="check">
            <input
              type="checkbox"
              checked={form.statuses.includes(s)}
              onChange={(e) =>
                set({ statuses: (e.target as HTMLInputElement).checked ? [...form.statuses, s] : form.statuses.filter((x) => x !== s) })
              }
            />
            {label(t, 'status_', s)}
          </label>
        ))}
      </fieldset>
      <button type="submit" class="btn primary">
        {t('apply')}
      </button>
    </form>
  );
}

/** One page of bookings, and the pager below it. */
function BookingList({ data, meta, applied, onChange }: { data: Meeting[]; meta?: PageMeta; applied: Filters; onChange: () => void }) {
  const { t, lang } = useI18n();
  const { site } = useSite();
  const columns: Column<Meeting>[] = [
    {
      header: t('when'),
      cell: (m) => {
        const z = zoneOf(site, m.projectId);
        return (
          <span>
            {dateTime(m.startDateTime, z, lang)} <span class="muted">({span(m.startDateTime, m.endDateTime, z, lang)})</span>
          </span>
        );
      },
    },
    { header: t('title'), cell: (m) => <a href={`#/booking/${m._id}`}>{m.title || '—'}</a> },
    { header: t('where'), cell: (m) => m.meetingRoomName ?? m.deskName ?? '—' },
    { header: t('organizer'), cell: (m) => m.organizer?.displayName || m.organizer?.name || '—' },
    { header: t('status'), cell: (m) => <StatusBadge status={m.status} /> },
    {
      header: t('actions'),
      cell: (m) => (
        <div class="actions">
          <a class="btn small" href={`#/booking/${m._id}`}>
            {t('open')}
          </a>
          <CancelBooking meeting={m} onDone={onChange} />
        </div>
      ),
    },
  ];
  return (
    <>
      <DataTable columns={columns} rows={data} rowKey={(m) => `${m._id}${m.startDateTime}`} empty={t('noBookings')} />
      {data.length > 0 && meta && (
        <div class="pager">
          <span>{t('showing', { from: meta.offset + 1, to: meta.offset + data.length, total: meta.total })}</span>
          <button
            type="button"
            class="btn"
            disabled={meta.offset === 0}
            onClick={() => writeFilters({ ...applied, offset: Math.max(0, meta.offset - PAGE) })}
          >
            {t('prevPage')}
          </button>
          <button
            type="button"
            class="btn"
            disabled={meta.offset + data.length >= meta.total}
            onClick={() => writeFilters({ ...applied, offset: meta.offset + PAGE })}
          >
            {t('nextPage')}
          </button>
        </div>
      )}
    </>
  );
}

function BookingsFor({ query, today, tz }: { query: URLSearchParams; today: string; tz: string }) {
  const { t } = useI18n();
  const applied = readFilters(query, today);
  const key = query.toString();
  const list = useLoad(
    () =>
      getPage<Meeting>('/ops/v1/meetings', {
        from: new Date(localInstant(applied.from, '00:00', tz)).toISOString(),
        to: new Date(localInstant(addDays(applied.to, 1), '00:00', tz)).toISOString(),
        statuses: applied.statuses,
        search: applied.search || undefined,
        projectId: applied.projectId || undefined,
        assetId: applied.assetId || undefined,
        limit: PAGE,
        offset: applied.offset,
      }),
    [key],
  );
  useLiveChanges(['meeting'], list.reload);
  return (
    <section class="bookings">
      <div class="screen-head">
        <h1>{t('navBookings')}</h1>
      </div>
      <BookingFilters applied={applied} />
      <Show value={list}>{({ data, meta }) => <BookingList data={data} meta={meta} applied={applied} onChange={list.reload} />}</Show>
    </section>
  );
}
