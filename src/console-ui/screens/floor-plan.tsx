/**
 * Live floor plan: rooms as SVG polygons (percent coordinates over the floor image,
 * or a neutral plan), coloured and labelled by their state now; rooms without a
 * polygon beside; desks as a grid. Re-fetches the floor's "now" on every change
 * the stream reports (and once a minute, as time alone changes states).
 */
import { Fragment } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import {
  ASSET_STATES,
  get,
  px,
  py,
  type AssetState,
  type BookingSummary,
  type Desk,
  type Floor,
  type FloorAsset,
  type FloorNow,
  type Point,
  type Project,
  type Room,
} from '../api.js';
import { time, span } from '../format.js';
import { labelPlace, labelWords, type RoomBox } from '../label-words.js';
import { label, useI18n } from '../i18n.js';
import { useLiveChanges } from '../live.js';
import { useSite } from '../site.js';
import { Empty, ProjectOptions, Show, StateBadge, StatusBadge, useLoad } from '../ui.js';

const LIVE_KINDS = ['meeting', 'clock', 'device', 'entry'] as const;

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
      <BadgeMark />
    </div>
  );
}

/** "Occupied by badge": someone badged in at the asset's doors (see AssetNow.occupiedByBadge). */
function BadgeMark({ at, tz }: { at?: string | null; tz?: string }) {
  const { t, lang } = useI18n();
  return (
    <span class="badge badge-in" title={at && tz ? t('badgedInAt', { t: time(at, tz, lang) }) : undefined}>
      <span aria-hidden="true">▣ </span>
      <span class="badge-text">{t('occupiedByBadge')}</span>
    </span>
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
  const { t, lang } = useI18n();
  if (!asset) return <p class="muted hint">{t('selectAsset')}</p>;
  return (
    <div class="asset-card" aria-live="polite">
      <h3>
        {asset.name} <StateBadge state={asset.state} />
        {asset.occupiedByBadge ? (
          <>
            {' '}
            <BadgeMark at={asset.lastBadgeAt} tz={tz} />
          </>
        ) : null}
      </h3>
      {room ? <p class="muted">{t('capacity', { n: room.capacity })}</p> : null}
      {asset.occupiedByBadge && asset.lastBadgeAt ? <p class="muted">{t('badgedInAt', { t: time(asset.lastBadgeAt, tz, lang) })}</p> : null}
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

/** The floors the picker offers: one project's (the chosen floor's project, else the one asked for, else the first with floors). */
function useFloorChoice(floorId?: string, projectId?: string) {
  const { site } = useSite();
  const chosen = site.floors.find((f) => f._id === floorId);
  const project =
    site.projects.find((p) => p._id === (chosen?.projectId ?? projectId)) ??
    site.projects.find((p) => site.floors.some((f) => f.projectId === p._id)) ??
    site.projects[0];
  const floors = site.floors.filter((f) => f.projectId === project?._id);
  const floor = chosen ?? floors[0];
  const groups = useMemo(() => {
    const out: { label: string; floors: Floor[] }[] = [];
    for (const f of floors) {
      let g = out.find((x) => x.label === f.zoneName);
      if (!g) out.push((g = { label: f.zoneName, floors: [] }));
      g.floors.push(f);
    }
    return out;
  }, [site.floors, project?._id]);
  return { project, floor, groups };
}

/** The project picker, shown when the site has more than one project: it opens that project's first floor. */
function ProjectPicker({ project }: { project: Project | undefined }) {
  const { t } = useI18n();
  const { site } = useSite();
  if (site.projects.length <= 1) return null;
  return (
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
  );
}

function FloorPicker({ floor, groups }: { floor: Floor; groups: { label: string; floors: Floor[] }[] }) {
  const { t } = useI18n();
  return (
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
  );
}

/** What the plan's rooms and tiles share: each asset's state now, which one is selected, and how to select or open one. */
interface Picking {
  stateOf: (id: string) => AssetState;
  /** Whether a badge says someone is there now. */
  badgedIn: (id: string) => boolean;
  selected: string | null;
  select: (id: string) => void;
  open: (id: string) => void;
}

function RoomPolygon({ room, pick }: { room: Room; pick: Picking }) {
  const { t } = useI18n();
  const st = pick.stateOf(room._id);
  return (
    <polygon
      class={`room state-${st}${pick.selected === room._id ? ' selected' : ''}`}
      points={room.polygon!.map((p) => `${px(p)},${py(p)}`).join(' ')}
      tabIndex={0}
      role="button"
      aria-label={`${room.name}: ${label(t, 'state_', st)}${pick.badgedIn(room._id) ? `, ${t('occupiedByBadge')}` : ''}`}
      aria-pressed={pick.selected === room._id}
      data-asset={room._id}
      data-name={room.name}
      onMouseEnter={() => pick.select(room._id)}
      onFocus={() => pick.select(room._id)}
      onClick={() => pick.select(room._id)}
      onDblClick={() => pick.open(room._id)}
      onKeyDown={(e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          pick.open(room._id);
        }
      }}
    >
      <title>{room.name}</title>
    </polygon>
  );
}

/** The drawn rooms over the floor image (or a neutral plan), each with its label placed beside the others. */
function Plan({ floor, drawn, pick }: { floor: Floor; drawn: Room[]; pick: Picking }) {
  const { t } = useI18n();
  const boxes = drawn.map((r) => outline(r.polygon!));
  return (
    <div class={`plan ${floor.planImageUrl ? 'with-image' : 'neutral'}`}>
      {floor.planImageUrl ? <img class="plan-img" src={floor.planImageUrl} alt="" /> : null}
      <svg
        class="plan-svg"
        viewBox="0 0 100 100"
        preserveAspectRatio="none"
        role="group"
        aria-label={t('planLabel', { floor: floor.name })}
      >
        {drawn.map((r) => (
          <RoomPolygon key={r._id} room={r} pick={pick} />
        ))}
      </svg>
      {drawn.map((r, i) => {
        const c = labelPlace(boxes[i]!, boxes);
        // As wide as the room, at least 4.75rem where there is room beside it; centred on the room.
        const w = `min(max(${c.width}%, 4.75rem), ${c.maxWidth}%)`;
        return (
          <div
            key={r._id}
            class="room-label"
            aria-hidden="true"
            data-asset={r._id}
            style={{ left: `calc(${c.x}% - ${w} / 2)`, top: `${c.y}%`, width: w }}
          >
            <RoomName name={r.name} />
            <StateBadge state={pick.stateOf(r._id)} />
            {pick.badgedIn(r._id) ? <BadgeMark /> : null}
          </div>
        );
      })}
    </div>
  );
}

/** Rooms without a polygon, as tiles beside the plan. */
function UnplacedRooms({ listed, anyDrawn, pick }: { listed: Room[]; anyDrawn: boolean; pick: Picking }) {
  const { t } = useI18n();
  return (
    <div class="unplaced">
      <h2>{anyDrawn ? t('notOnPlan') : t('rooms')}</h2>
      <ul class="tile-list">
        {listed.map((r) => (
          <li key={r._id}>
            <button
              type="button"
              class={`tile state-${pick.stateOf(r._id)}`}
              aria-pressed={pick.selected === r._id}
              onClick={() => pick.select(r._id)}
              onMouseEnter={() => pick.select(r._id)}
            >
              <span class="tile-name">{r.name}</span>
              <StateBadge state={pick.stateOf(r._id)} />
              {pick.badgedIn(r._id) ? <BadgeMark /> : null}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}

function DeskGrid({ desks, pick }: { desks: Desk[]; pick: Picking }) {
  const { t } = useI18n();
  return (
    <div class="floor-desks">
      <h2>{t('desks')}</h2>
      {desks.length === 0 ? (
        <Empty>{t('noDesksOnFloor')}</Empty>
      ) : (
        <ul class="desk-grid">
          {desks.map((d) => (
            <li key={d._id}>
              <button
                type="button"
                class={`tile desk state-${pick.stateOf(d._id)}`}
                aria-pressed={pick.selected === d._id}
                onClick={() => pick.select(d._id)}
              >
                <span class="tile-name">{d.name}</span>
                <StateBadge state={pick.stateOf(d._id)} />
                {pick.badgedIn(d._id) ? <BadgeMark /> : null}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The floor's state now: the plan and unplaced rooms, the desks, and the selected asset's card. */
function FloorState({
  data,
  floor,
  project,
  selected,
  setSelected,
}: {
  data: FloorNow;
  floor: Floor;
  project: Project | undefined;
  selected: string | null;
  setSelected: (id: string) => void;
}) {
  const { t, lang } = useI18n();
  const { site } = useSite();
  const rooms = site.rooms.filter((r) => r.floorId === floor._id);
  const desks = site.desks.filter((d) => d.floorId === floor._id).sort((a, b) => a.index - b.index || a.name.localeCompare(b.name));
  const drawn = rooms.filter((r) => r.polygon && r.polygon.length >= 3);
  const listed = rooms.filter((r) => !r.polygon || r.polygon.length < 3);
  const byId = new Map(data.assets.map((a) => [a._id, a]));
  const tz = data.timeZone;
  const pick: Picking = {
    stateOf: (id) => byId.get(id)?.state ?? 'closed',
    badgedIn: (id) => byId.get(id)?.occupiedByBadge ?? false,
    selected,
    select: setSelected,
    open: (id) => (location.hash = `#/day/${id}`),
  };
  const sel = selected ? byId.get(selected) : undefined;
  return (
    <>
      <p class="muted as-of">
        {site.projects.length > 1 && project ? `${project.name} · ` : ''}
        {floor.zoneName} · {floor.name} · {t('updatedAt', { t: time(data.at, tz, lang) })}
      </p>
      <div class="floor-grid">
        <div class="floor-main">
          {drawn.length > 0 || floor.planImageUrl ? <Plan floor={floor} drawn={drawn} pick={pick} /> : null}
          {listed.length > 0 && <UnplacedRooms listed={listed} anyDrawn={drawn.length > 0} pick={pick} />}
          {rooms.length === 0 && <Empty>{t('noRoomsOnFloor')}</Empty>}
        </div>
        <DeskGrid desks={desks} pick={pick} />
        <aside class="floor-side card">
          <AssetCard asset={sel} tz={tz} room={rooms.find((r) => r._id === selected)} />
        </aside>
      </div>
    </>
  );
}

export function FloorPlan({ floorId, projectId }: { floorId?: string; projectId?: string }) {
  const { t } = useI18n();
  const { project, floor, groups } = useFloorChoice(floorId, projectId);
  const [selected, setSelected] = useState<string | null>(null);
  const now = useLoad(() => (floor ? get<FloorNow>(`/ops/v1/floors/${floor._id}/now`) : Promise.resolve(null)), [floor?._id]);
  useLiveChanges(LIVE_KINDS, now.reload);
  useEffect(() => {
    const timer = setInterval(now.reload, 60_000);
    return () => clearInterval(timer);
  }, [now.reload]);
  useEffect(() => setSelected(null), [floor?._id]);

  if (!floor) {
    return (
      <section>
        <div class="screen-head">
          <h1>{t('navFloor')}</h1>
          <ProjectPicker project={project} />
        </div>
        <Empty>{t('noFloors')}</Empty>
      </section>
    );
  }
  return (
    <section class="floor">
      <div class="screen-head">
        <h1>{t('navFloor')}</h1>
        <ProjectPicker project={project} />
        <FloorPicker floor={floor} groups={groups} />
        <button type="button" class="btn subtle" onClick={now.reload}>
          {t('refresh')}
        </button>
      </div>
      <Legend />
      <Show value={now}>
        {(data) => (data ? <FloorState data={data} floor={floor} project={project} selected={selected} setSelected={setSelected} /> : null)}
      </Show>
    </section>
  );
}
