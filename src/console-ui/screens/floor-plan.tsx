/**
 * Live floor plan: rooms as SVG polygons (percent coordinates over the floor image,
 * or a neutral plan), coloured and labelled by their state now; rooms without a
 * polygon beside; desks as a grid. Re-fetches the floor's "now" on every change
 * the stream reports (and once a minute, as time alone changes states).
 */
import { Fragment } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ASSET_STATES, get, px, py, type Point, type BookingSummary, type FloorAsset, type FloorNow, type Room } from '../api.js';
import { time, span } from '../format.js';
import { labelPlace, labelWords, type RoomBox } from '../label-words.js';
import { label, useI18n } from '../i18n.js';
import { useLiveChanges } from '../live.js';
import { useSite } from '../site.js';
import { Empty, ProjectOptions, Show, StateBadge, StatusBadge, useLoad } from '../ui.js';

const LIVE_KINDS = ['meeting', 'clock', 'device'] as const;

/** A room's bounding box on the plan (percent). */
function outline(points: Point[]): RoomBox {
  const xs = points.map(px);
  const ys = points.map(py);
  return { minX: Math.min(...xs), maxX: Math.max(...xs), minY: Math.min(...ys), maxY: Math.max(...ys) };
}

function Legend() {
  const { t } = useI18n();
  return (
    <div class="legend" aria-label={t('legend')} role="group">
      {ASSET_STATES.map((s) => (
        <StateBadge key={s} state={s} />
      ))}
    </div>
  );
}

function BookingLine({ b, tz, which }: { b: BookingSummary | null; tz: string; which: 'current' | 'next' }) {
  const { t, lang } = useI18n();
  return (
    <div class="booking-line">
      <dt>{t(which)}</dt>
      <dd>
        {b ? (
          <a href={`#/booking/${b._id}`} class="booking-link">
            <strong>{b.title || '—'}</strong>
            <span class="muted">
              {' '}
              {span(b.startDateTime, b.endDateTime, tz, lang)} · {b.organizerName}
            </span>{' '}
            <StatusBadge status={b.status} />
          </a>
        ) : (
          <span class="muted">{which === 'current' ? t('nothingNow') : t('nothingNext')}</span>
        )}
      </dd>
    </div>
  );
}

function AssetCard({ asset, tz, room }: { asset: FloorAsset | undefined; tz: string; room?: Room }) {
  const { t } = useI18n();
  if (!asset) return <p class="muted hint">{t('selectAsset')}</p>;
  return (
    <div class="asset-card" aria-live="polite">
      <h3>
        {asset.name} <StateBadge state={asset.state} />
      </h3>
      {room ? <p class="muted">{t('capacity', { n: room.capacity })}</p> : null}
      <dl>
        <BookingLine b={asset.current} tz={tz} which="current" />
        <BookingLine b={asset.next} tz={tz} which="next" />
      </dl>
      <a class="btn" href={`#/day/${asset._id}`}>
        {t('openDay')}
      </a>
    </div>
  );
}

/** Room names wrap between words only (labelWords); a word wider than the room ends in an ellipsis (the full name is the polygon's title). */
function RoomName({ name }: { name: string }) {
  const { lang } = useI18n();
  return (
    <span class="room-name">
      {labelWords(name, lang).map((w, i) => (
        <Fragment key={i}>
          <span class="word">{w.text}</span>
          {w.space ? ' ' : null}
        </Fragment>
      ))}
    </span>
  );
}

export function FloorPlan({ floorId, projectId }: { floorId?: string; projectId?: string }) {
  const { t, lang } = useI18n();
  const { site } = useSite();
  const chosen = site.floors.find((f) => f._id === floorId);
  // The picker shows one project's floors: the chosen floor's project, else the one asked for, else the first with floors.
  const project =
    site.projects.find((p) => p._id === (chosen?.projectId ?? projectId)) ??
    site.projects.find((p) => site.floors.some((f) => f.projectId === p._id)) ??
    site.projects[0];
  const floors = site.floors.filter((f) => f.projectId === project?._id);
  const floor = chosen ?? floors[0];
  const [selected, setSelected] = useState<string | null>(null);
  const now = useLoad(() => (floor ? get<FloorNow>(`/ops/v1/floors/${floor._id}/now`) : Promise.resolve(null)), [floor?._id]);
  useLiveChanges(LIVE_KINDS, now.reload);
  useEffect(() => {
    const timer = setInterval(now.reload, 60_000);
    return () => clearInterval(timer);
  }, [now.reload]);
  useEffect(() => setSelected(null), [floor?._id]);

  const groups = useMemo(() => {
    const out: { label: string; floors: typeof floors }[] = [];
    for (const f of floors) {
      let g = out.find((x) => x.label === f.zoneName);
      if (!g) out.push((g = { label: f.zoneName, floors: [] }));
      g.floors.push(f);
    }
    return out;
  }, [site.floors, project?._id]);

  const projectPicker =
    site.projects.length > 1 ? (
      <label class="inline">
        <span>{t('project')}</span>
        <select
          value={project?._id}
          onChange={(e) => {
            const id = (e.target as HTMLSelectElement).value;
            const first = site.floors.find((f) => f.projectId === id);
            location.hash = first ? `#/floor/${first._id}` : `#/floor?project=${encodeURIComponent(id)}`;
          }}
        >
          <ProjectOptions projects={site.projects} />
        </select>
      </label>
    ) : null;

  if (!floor) {
    return (
      <section>
        <div class="screen-head">
          <h1>{t('navFloor')}</h1>
          {projectPicker}
        </div>
        <Empty>{t('noFloors')}</Empty>
      </section>
    );
  }
  const rooms = site.rooms.filter((r) => r.floorId === floor._id);
  const desks = site.desks.filter((d) => d.floorId === floor._id).sort((a, b) => a.index - b.index || a.name.localeCompare(b.name));
  const drawn = rooms.filter((r) => r.polygon && r.polygon.length >= 3);
  const listed = rooms.filter((r) => !r.polygon || r.polygon.length < 3);
  const boxes = drawn.map((r) => outline(r.polygon!));

  return (
    <section class="floor">
      <div class="screen-head">
        <h1>{t('navFloor')}</h1>
        {projectPicker}
        <label class="inline">
          <span>{t('floor')}</span>
          <select value={floor._id} onChange={(e) => (location.hash = `#/floor/${(e.target as HTMLSelectElement).value}`)}>
            {groups.map((g) => (
              <optgroup key={g.label} label={g.label}>
                {g.floors.map((f) => (
                  <option key={f._id} value={f._id}>
                    {f.name}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </label>
        <button type="button" class="btn subtle" onClick={now.reload}>
          {t('refresh')}
        </button>
      </div>
      <Legend />
      <Show value={now}>
        {(data) => {
          if (!data) return null;
          const byId = new Map(data.assets.map((a) => [a._id, a]));
          const tz = data.timeZone;
          const stateOf = (id: string) => byId.get(id)?.state ?? 'closed';
          const select = (id: string) => setSelected(id);
          const open = (id: string) => (location.hash = `#/day/${id}`);
          const sel = selected ? byId.get(selected) : undefined;
          return (
            <>
              <p class="muted as-of">
                {site.projects.length > 1 && project ? `${project.name} · ` : ''}
                {floor.zoneName} · {floor.name} · {t('updatedAt', { t: time(data.at, tz, lang) })}
              </p>
              <div class="floor-grid">
                <div class="floor-main">
                  {drawn.length > 0 || floor.planImageUrl ? (
                    <div class={`plan ${floor.planImageUrl ? 'with-image' : 'neutral'}`}>
                      {floor.planImageUrl ? <img class="plan-img" src={floor.planImageUrl} alt="" /> : null}
                      <svg class="plan-svg" viewBox="0 0 100 100" preserveAspectRatio="none" role="group" aria-label={t('planLabel', { floor: floor.name })}>
                        {drawn.map((r) => {
                          const st = stateOf(r._id);
                          return (
                            <polygon
                              key={r._id}
                              class={`room state-${st}${selected === r._id ? ' selected' : ''}`}
                              points={r.polygon!.map((p) => `${px(p)},${py(p)}`).join(' ')}
                              tabIndex={0}
                              role="button"
                              aria-label={`${r.name}: ${label(t, 'state_', st)}`}
                              aria-pressed={selected === r._id}
                              data-asset={r._id}
                              data-name={r.name}
                              onMouseEnter={() => select(r._id)}
                              onFocus={() => select(r._id)}
                              onClick={() => select(r._id)}
                              onDblClick={() => open(r._id)}
                              onKeyDown={(e) => {
                                if (e.key === 'Enter' || e.key === ' ') {
                                  e.preventDefault();
                                  open(r._id);
                                }
                              }}
                            >
                              <title>{r.name}</title>
                            </polygon>
                          );
                        })}
                      </svg>
                      {drawn.map((r, i) => {
                        const c = labelPlace(boxes[i]!, boxes);
                        // As wide as the room, at least 4.75rem where there is room beside it; centred on the room.
                        const w = `min(max(${c.width}%, 4.75rem), ${c.maxWidth}%)`;
                        return (
                          <div key={r._id} class="room-label" aria-hidden="true" data-asset={r._id} style={{ left: `calc(${c.x}% - ${w} / 2)`, top: `${c.y}%`, width: w }}>
                            <RoomName name={r.name} />
                            <StateBadge state={stateOf(r._id)} />
                          </div>
                        );
                      })}
                    </div>
                  ) : null}
                  {listed.length > 0 && (
                    <div class="unplaced">
                      <h2>{drawn.length > 0 ? t('notOnPlan') : t('rooms')}</h2>
                      <ul class="tile-list">
                        {listed.map((r) => (
                          <li key={r._id}>
                            <button type="button" class={`tile state-${stateOf(r._id)}`} aria-pressed={selected === r._id} onClick={() => select(r._id)} onMouseEnter={() => select(r._id)}>
                              <span class="tile-name">{r.name}</span>
                              <StateBadge state={stateOf(r._id)} />
                            </button>
                          </li>
                        ))}
                      </ul>
                    </div>
                  )}
                  {rooms.length === 0 && <Empty>{t('noRoomsOnFloor')}</Empty>}
                </div>
                <div class="floor-desks">
                  <h2>{t('desks')}</h2>
                  {desks.length === 0 ? (
                    <Empty>{t('noDesksOnFloor')}</Empty>
                  ) : (
                    <ul class="desk-grid">
                      {desks.map((d) => (
                        <li key={d._id}>
                          <button type="button" class={`tile desk state-${stateOf(d._id)}`} aria-pressed={selected === d._id} onClick={() => select(d._id)}>
                            <span class="tile-name">{d.name}</span>
                            <StateBadge state={stateOf(d._id)} />
                          </button>
                        </li>
                      ))}
                    </ul>
                  )}
                </div>
                <aside class="floor-side card">
                  <AssetCard asset={sel} tz={tz} room={rooms.find((r) => r._id === selected)} />
                </aside>
              </div>
            </>
          );
        }}
      </Show>
    </section>
  );
}
