/**
 * Analytics: for one project, rooms or desks, and a range of local days (default the last 30),
 * the headline figures and no-show rate (groupBy project), utilisation and occupancy over time
 * (groupBy day, or week past 92 days; a uPlot chart), the hour-of-week heatmap (groupBy
 * hourOfWeek), the least and most used assets (groupBy asset) and a CSV download of any grouping.
 * Loaded lazily by main.tsx: uPlot stays out of the console's first load.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { get, getFile, serviceNow, type AnalyticsGroupBy, type UtilisationRow } from '../api.js';
import { addDays, localDate } from '../format.js';
import { useI18n, type Key, type Lang, type T } from '../i18n.js';
import { projectOf, useSite, zoneOf } from '../site.js';
import { DataTable, Empty, Notice, ProjectOptions, Show, useAction, useLoad } from '../ui.js';

const PATH = '/ops/v1/analytics/utilisation';
/** A range longer than this many days is charted by week. */
const WEEKLY_AFTER_DAYS = 92;
const RANKED = 5;
const CSV_GROUPINGS: readonly AnalyticsGroupBy[] = ['project', 'zone', 'floor', 'asset', 'day', 'week', 'month', 'hourOfWeek'];

type Kind = 'room' | 'desk';
interface Filters {
  project: string;
  kind: Kind;
  from: string;
  to: string;
}

interface AnalyticsData {
  total: UtilisationRow | undefined;
  trend: UtilisationRow[];
  hours: UtilisationRow[];
  assets: UtilisationRow[];
}

/** Local days from `from` to `to`, both included. */
const daysIn = (from: string, to: string) => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 864e5) + 1;
const trendUnit = (f: Filters): 'day' | 'week' => (daysIn(f.from, f.to) > WEEKLY_AFTER_DAYS ? 'week' : 'day');
const queryOf = (f: Filters, groupBy: AnalyticsGroupBy) => ({ project: f.project, from: f.from, to: f.to, groupBy, assetKind: f.kind });

const locale = (lang: Lang) => (lang === 'th' ? 'th-TH' : 'en-GB');
const percent = (v: number | null | undefined, lang: Lang) =>
  v === null || v === undefined ? '—' : new Intl.NumberFormat(locale(lang), { style: 'percent', maximumFractionDigits: 1 }).format(v);
const count = (n: number, lang: Lang) => new Intl.NumberFormat(locale(lang)).format(n);
const shortDate = (ymd: string, lang: Lang) =>
  new Intl.DateTimeFormat(locale(lang), { timeZone: 'UTC', day: 'numeric', month: 'short' }).format(new Date(`${ymd}T12:00:00Z`));
/** ISO weekday 1–7 (Monday first) by name, `short` or `narrow`; 1 January 2024 was a Monday. */
const weekdayName = (isoDay: number, lang: Lang, width: 'short' | 'narrow' = 'short') =>
  new Intl.DateTimeFormat(locale(lang), { timeZone: 'UTC', weekday: width }).format(new Date(Date.UTC(2024, 0, isoDay, 12)));

function readFilters(q: URLSearchParams, projectId: string, today: string): Filters {
  return {
    project: projectId,
    kind: q.get('kind') === 'desk' ? 'desk' : 'room',
    from: q.get('from') || addDays(today, -29),
    to: q.get('to') || today,
  };
}

function writeFilters(f: Filters): void {
  const q = new URLSearchParams({ project: f.project, kind: f.kind, from: f.from, to: f.to });
  location.hash = `#/analytics?${q.toString()}`;
}

/** The screen once it knows the project and the service's today in its zone (the sandbox clock may run ahead of the browser's). */
export function Analytics({ query }: { query: URLSearchParams }) {
  const { t } = useI18n();
  const { site } = useSite();
  const projectId = projectOf(site, query.get('project') ?? undefined)?._id ?? site.projects[0]?._id;
  const tz = zoneOf(site, projectId);
  const needsToday = !query.get('from') || !query.get('to');
  const today = useLoad(async () => (needsToday ? localDate(await serviceNow(), tz) : ''), [tz, needsToday]);
  if (!projectId) {
    return (
      <section class="analytics">
        <div class="screen-head">
          <h1>{t('navAnalytics')}</h1>
        </div>
        <Empty>{t('analyticsNoProjects')}</Empty>
      </section>
    );
  }
  return <Show value={today}>{(day) => <AnalyticsFor key={day} filters={readFilters(query, projectId, day)} />}</Show>;
}

async function loadFigures(f: Filters): Promise<AnalyticsData> {
  const [total, trend, hours, assets] = await Promise.all(
    (['project', trendUnit(f), 'hourOfWeek', 'asset'] as const).map((g) => get<UtilisationRow[]>(PATH, queryOf(f, g))),
  );
  return { total: total?.[0], trend: trend ?? [], hours: hours ?? [], assets: assets ?? [] };
}

function AnalyticsFor({ filters }: { filters: Filters }) {
  const { t, lang } = useI18n();
  const key = JSON.stringify(filters);
  const figures = useLoad(() => loadFigures(filters), [key]);
  const unit = trendUnit(filters);
  const days = daysIn(filters.from, filters.to);
  return (
    <section class="analytics">
      <div class="screen-head">
        <h1>{t('navAnalytics')}</h1>
        <button type="button" class="btn" onClick={figures.reload} disabled={figures.loading}>
          {t('refresh')}
        </button>
      </div>
      <AnalyticsFilters key={key} applied={filters} />
      <p class="muted range-line">
        {days > 0 ? `${t('analyticsRange', { from: shortDate(filters.from, lang), to: shortDate(filters.to, lang), n: days })} · ` : null}
        {t('figuresLag')}
      </p>
      <Show value={figures}>
        {(data) => (
          <>
            <Headline total={data.total} />
            <div class="card">
              <h2>{t(unit === 'week' ? 'trendByWeek' : 'trendByDay')}</h2>
              <TrendChart rows={data.trend} unit={unit} />
              <TrendTable rows={data.trend} unit={unit} />
            </div>
            <Heatmap rows={data.hours} />
            <Ranking rows={data.assets} />
            <CsvDownload filters={filters} initial={unit} />
          </>
        )}
      </Show>
    </section>
  );
}

/** Project, rooms or desks, and the range; Show writes them to the address. */
function AnalyticsFilters({ applied }: { applied: Filters }) {
  const { t } = useI18n();
  const { site } = useSite();
  const [form, setForm] = useState<Filters>(applied);
  const set = (patch: Partial<Filters>) => setForm((f) => ({ ...f, ...patch }));
  const submit = (e: Event) => {
    e.preventDefault();
    writeFilters(form);
  };
  return (
    <form class="card filters analytics-filters" onSubmit={submit}>
      <label>
        <span>{t('project')}</span>
        <select value={form.project} onChange={(e) => set({ project: (e.target as HTMLSelectElement).value })}>
          <ProjectOptions projects={site.projects} />
        </select>
      </label>
      <label>
        <span>{t('roomsOrDesks')}</span>
        <select value={form.kind} onChange={(e) => set({ kind: (e.target as HTMLSelectElement).value as Kind })}>
          <option value="room">{t('rooms')}</option>
          <option value="desk">{t('desks')}</option>
        </select>
      </label>
      <label>
        <span>{t('from')}</span>
        <input type="date" required value={form.from} onInput={(e) => set({ from: (e.target as HTMLInputElement).value })} />
      </label>
      <label>
        <span>{t('to')}</span>
        <input type="date" required value={form.to} onInput={(e) => set({ to: (e.target as HTMLInputElement).value })} />
      </label>
      <button type="submit" class="btn primary">
        {t('show')}
      </button>
    </form>
  );
}

const HEADLINE: readonly { key: Key; value: (r: UtilisationRow, lang: Lang) => string; figure: string }[] = [
  { figure: 'utilisation', key: 'fig_utilisation', value: (r, lang) => percent(r.utilisation, lang) },
  { figure: 'occupancy', key: 'fig_occupancy', value: (r, lang) => percent(r.occupancy, lang) },
  { figure: 'noShowRate', key: 'fig_noShowRate', value: (r, lang) => percent(r.noShowRate, lang) },
  { figure: 'bookings', key: 'fig_bookings', value: (r, lang) => count(r.bookings, lang) },
  { figure: 'checkIns', key: 'fig_checkIns', value: (r, lang) => count(r.checkIns, lang) },
  { figure: 'noShows', key: 'fig_noShows', value: (r, lang) => count(r.noShows, lang) },
  { figure: 'cancellations', key: 'fig_cancellations', value: (r, lang) => count(r.cancellations, lang) },
  { figure: 'walkIns', key: 'fig_walkIns', value: (r, lang) => count(r.walkIns, lang) },
];

const ZERO: UtilisationRow = {
  group: {},
  availableMinutes: 0,
  bookedMinutes: 0,
  occupiedMinutes: 0,
  releasedMinutes: 0,
  bookings: 0,
  checkIns: 0,
  noShows: 0,
  cancellations: 0,
  walkIns: 0,
  utilisation: null,
  occupancy: null,
  noShowRate: null,
};

/** The project's totals: an empty range shows zeros and says why, not an error. */
function Headline({ total }: { total: UtilisationRow | undefined }) {
  const { t, lang } = useI18n();
  const row = total ?? ZERO;
  const hours = (min: number) => new Intl.NumberFormat(locale(lang), { maximumFractionDigits: 1 }).format(min / 60);
  return (
    <div class="card">
      <h2>{t('headline')}</h2>
      {row.bookings === 0 && row.walkIns === 0 ? <p class="analytics-empty">{t('analyticsEmpty')}</p> : null}
      <dl class="figures">
        {HEADLINE.map((h) => (
          <div key={h.figure} class="figure" data-figure={h.figure}>
            <dt>{t(h.key)}</dt>
            <dd>{h.value(row, lang)}</dd>
          </div>
        ))}
      </dl>
      <p class="muted">{t('bookedOfOpen', { booked: hours(row.bookedMinutes), open: hours(row.availableMinutes) })}</p>
    </div>
  );
}

const periodOf = (r: UtilisationRow, unit: 'day' | 'week') => (unit === 'week' ? r.group.week : r.group.day) ?? '';
const asPercent = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 10);

function chartOptions(width: number, t: T, lang: Lang, single: boolean): uPlot.Options {
  const pct = (_u: uPlot, v: number | null) => (v === null ? '—' : `${v} %`);
  return {
    width,
    height: 260,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), 'UTC'),
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.min(100, Math.max(10, Math.ceil((max || 0) / 10) * 10))] } },
    axes: [
      { values: (_u, splits) => splits.map((s) => shortDate(new Date(s * 1e3).toISOString().slice(0, 10), lang)) },
      { values: (_u, splits) => splits.map((s) => `${s} %`), size: 56 },
    ],
    series: [
      { label: t('period'), value: (_u, v) => (v === null ? '—' : shortDate(new Date(v * 1e3).toISOString().slice(0, 10), lang)) },
      { label: t('fig_utilisation'), stroke: '#1d5fbf', width: 2, fill: 'rgba(29, 95, 191, 0.08)', value: pct, points: { show: single } },
      { label: t('fig_occupancy'), stroke: '#0f8a5f', width: 2, dash: [6, 4], value: pct, points: { show: single } },
    ],
  };
}

/** Utilisation and occupancy over the range (uPlot, sized to its box; days are UTC midnights so the axis shows local dates as they are). */
function TrendChart({ rows, unit }: { rows: UtilisationRow[]; unit: 'day' | 'week' }) {
  const { t, lang } = useI18n();
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [
      rows.map((r) => Date.parse(`${periodOf(r, unit)}T00:00:00Z`) / 1e3),
      rows.map((r) => asPercent(r.utilisation)),
      rows.map((r) => asPercent(r.occupancy)),
    ];
    const plot = new uPlot(chartOptions(el.clientWidth, t, lang, rows.length < 3), data, el);
    const observer = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: 260 }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [rows, unit, lang]);
  return <div ref={box} class="trend-chart" role="img" aria-label={t(unit === 'week' ? 'trendByWeek' : 'trendByDay')} />;
}

/** The chart's figures as a table, folded away (for reading exact values, and for screen readers). */
function TrendTable({ rows, unit }: { rows: UtilisationRow[]; unit: 'day' | 'week' }) {
  const { t, lang } = useI18n();
  const when = (r: UtilisationRow) =>
    unit === 'week' ? t('weekOf', { d: shortDate(periodOf(r, unit), lang) }) : shortDate(periodOf(r, unit), lang);
  return (
    <details class="trend-table">
      <summary>{t('trendTable')}</summary>
      <DataTable
        columns={[
          { header: t('period'), cell: when },
          { header: t('fig_utilisation'), cell: (r) => percent(r.utilisation, lang) },
          { header: t('fig_occupancy'), cell: (r) => percent(r.occupancy, lang) },
          { header: t('fig_bookings'), cell: (r) => count(r.bookings, lang) },
          { header: t('fig_noShows'), cell: (r) => count(r.noShows, lang) },
        ]}
        rows={rows}
        rowKey={(r) => periodOf(r, unit)}
        empty={t('analyticsEmpty')}
      />
    </details>
  );
}

const HOURS = Array.from({ length: 24 }, (_, h) => h);
const WEEKDAYS = [1, 2, 3, 4, 5, 6, 7];

/** 7 × 24 cells, shaded by utilisation (a CSS custom property set through the CSSOM); hours never open are hatched. */
function Heatmap({ rows }: { rows: UtilisationRow[] }) {
  const { t, lang } = useI18n();
  const byCell = new Map(rows.map((r) => [`${r.group.weekday}-${r.group.hour}`, r]));
  return (
    <div class="card">
      <h2 id="heatmap-title">{t('heatmap')}</h2>
      <div class="heatmap-wrap">
        <table class="heatmap" aria-labelledby="heatmap-title">
          <thead>
            <tr>
              <td />
              {HOURS.map((h) => (
                <th key={h} scope="col">
                  {h % 3 === 0 ? h : ''}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {WEEKDAYS.map((d) => {
              const day = weekdayName(d, lang);
              return (
                <tr key={d}>
                  {/* Thai's short names (อังคาร, พฤหัส) are too wide for a phone: its usual one- or two-letter forms. */}
                  <th scope="row" title={day}>
                    {lang === 'th' ? weekdayName(d, lang, 'narrow') : day}
                  </th>
                  {HOURS.map((h) => {
                    const u = byCell.get(`${d}-${h}`)?.utilisation ?? null;
                    const text = u === null ? t('heatClosed', { day, hour: h }) : t('heatCell', { day, hour: h, u: percent(u, lang) });
                    return (
                      <td
                        key={h}
                        class={u === null ? 'heat closed' : 'heat'}
                        style={u === null ? undefined : { '--u': String(u) }}
                        title={text}
                        aria-label={text}
                      />
                    );
                  })}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <p class="heat-legend muted">
        <span>{t('low')}</span>
        <span class="heat-scale" aria-hidden="true" />
        <span>{t('high')}</span>
        <span class="heat-hint">{t('heatmapHint')}</span>
      </p>
    </div>
  );
}

/**
 * The most and the least used assets by utilisation (assets never open in the range are left out).
 * With fewer than ten, the two lists share them out (the busier half is "most used"): none shows in both;
 * an asset nobody booked is never "most used".
 */
function rank(rows: readonly UtilisationRow[], n = RANKED): { least: UtilisationRow[]; most: UtilisationRow[] } {
  const open = rows.filter((r) => r.utilisation !== null);
  const desc = [...open].sort((a, b) => b.utilisation! - a.utilisation! || b.bookings - a.bookings);
  const most = desc.slice(0, Math.min(n, Math.ceil(open.length / 2))).filter((r) => r.bookedMinutes > 0);
  const least = desc.slice(most.length).reverse().slice(0, n);
  return { least, most };
}

function Ranking({ rows }: { rows: UtilisationRow[] }) {
  const { t } = useI18n();
  const { least, most } = rank(rows);
  return (
    <div class="two-col ranking-cols">
      <RankList title={t('leastUsed')} rows={least} name="least" />
      <RankList
        title={t('mostUsed')}
        rows={most}
        name="most"
        empty={rows.some((r) => r.utilisation !== null) ? t('noneBooked') : undefined}
      />
    </div>
  );
}

function RankList({ title, rows, name, empty }: { title: string; rows: UtilisationRow[]; name: string; empty?: string }) {
  const { t, lang } = useI18n();
  const { site } = useSite();
  const floorName = (id?: string) => site.floors.find((f) => f._id === id)?.name;
  return (
    <div class="card" data-ranking={name}>
      <h2>{title}</h2>
      {rows.length === 0 ? (
        <Empty>{empty ?? t('noRanking')}</Empty>
      ) : (
        <ol class="ranking">
          {rows.map((r) => (
            <li key={r.group.assetId}>
              <span class="rank-name">
                {r.group.assetName ?? r.group.assetId}
                {floorName(r.group.floorId) ? <span class="muted"> · {floorName(r.group.floorId)}</span> : null}
              </span>
              <span class="rank-bar" aria-hidden="true">
                <span style={{ width: `${Math.round((r.utilisation ?? 0) * 100)}%` }} />
              </span>
              <span class="rank-value">
                {percent(r.utilisation, lang)}
                <span class="muted">
                  {' '}
                  · {t('fig_bookings')} {count(r.bookings, lang)}
                </span>
              </span>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

/** The same figures as CSV (Accept: text/csv), one row per the grouping chosen, saved through a Blob link. */
function CsvDownload({ filters, initial }: { filters: Filters; initial: AnalyticsGroupBy }) {
  const { t } = useI18n();
  const [groupBy, setGroupBy] = useState<AnalyticsGroupBy>(initial);
  const [file, setFile] = useState<{ url: string; name: string } | null>(null);
  const action = useAction();
  useEffect(() => () => file && URL.revokeObjectURL(file.url), [file]);
  const download = () =>
    action.run(
      async () => {
        const blob = await getFile(PATH, queryOf(filters, groupBy), 'text/csv');
        const name = `analytics-${filters.kind}-${groupBy}-${filters.from}-${filters.to}.csv`;
        const url = URL.createObjectURL(blob);
        const a = document.createElement('a');
        a.href = url;
        a.download = name;
        a.click();
        setFile({ url, name });
        return name;
      },
      () => 'saved',
    );
  return (
    <div class="card csv-card">
      <h2>{t('csv')}</h2>
      <div class="row wrap">
        <label class="inline">
          <span>{t('csvRows')}</span>
          <select value={groupBy} onChange={(e) => setGroupBy((e.target as HTMLSelectElement).value as AnalyticsGroupBy)}>
            {CSV_GROUPINGS.map((g) => (
              <option key={g} value={g}>
                {t(`groupBy_${g}`)}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="btn primary" onClick={download} disabled={action.busy}>
          {t('downloadCsv')}
        </button>
        {file ? (
          <a class="btn subtle" href={file.url} download={file.name} title={file.name}>
            {t('saveAgain')}
          </a>
        ) : null}
      </div>
      {/* Worded at render time, so it follows a change of language. */}
      <Notice text={action.done && file ? t('csvSaved', { name: file.name }) : null} error={action.error} />
    </div>
  );
}
