/**
 * Day view of one room or desk: a timeline for a property-local date with the open
 * hours, breaks, bookings (status) and the cleaning block after each booking.
 * A booking opens its detail (history, payment, cancel).
 */
import { Fragment } from 'preact';
import { get, type AssetDay } from '../api.js';
import { addDays, localInstant, longDate, span, time } from '../format.js';
import { useI18n } from '../i18n.js';
import { useLiveChanges } from '../live.js';
import { useSite } from '../site.js';
import { Empty, Show, StatusBadge, useLoad } from '../ui.js';

const HOUR = 3_600_000;

function AssetPicker({ assetId, date }: { assetId?: string; date?: string }) {
  const { t } = useI18n();
  const { site } = useSite();
  const go = (id: string) => (location.hash = `#/day/${id}${date ? `/${date}` : ''}`);
  return (
    <label class="inline">
      <span>{t('asset')}</span>
      <select value={assetId ?? ''} onChange={(e) => go((e.target as HTMLSelectElement).value)}>
        {!assetId && <option value="">{t('chooseAsset')}</option>}
        {site.floors.map((f) => {
          const rooms = site.rooms.filter((r) => r.floorId === f._id);
          const desks = site.desks.filter((d) => d.floorId === f._id);
          if (rooms.length + desks.length === 0) return null;
          return (
            <optgroup
              key={f._id}
              label={`${site.projects.length > 1 ? `${site.projects.find((p) => p._id === f.projectId)?.name ?? ''} · ` : ''}${f.zoneName} · ${f.name}`}
            >
              {rooms.map((r) => (
                <option key={r._id} value={r._id}>
                  {r.name}
                </option>
              ))}
              {desks.map((d) => (
                <option key={d._id} value={d._id}>
                  {d.name}
                </option>
              ))}
            </optgroup>
          );
        })}
      </select>
    </label>
  );
}

function Timeline({ day }: { day: AssetDay }) {
  const { t, lang } = useI18n();
  const tz = day.timeZone;
  const midnight = localInstant(day.date, '00:00', tz);
  const hoursOf = (iso: string) => (Date.parse(iso) - midnight) / HOUR;
  const marks = [
    ...day.open.flatMap((s) => [hoursOf(s.start), hoursOf(s.end)]),
    ...day.bookings.flatMap((b) => [hoursOf(b.startDateTime), hoursOf(b.cleaningEndsAt ?? b.endDateTime)]),
  ];
  const startH = Math.max(0, Math.floor(marks.length ? Math.min(...marks) : 8));
  const endH = Math.min(24, Math.max(startH + 1, Math.ceil(marks.length ? Math.max(...marks) : 18)));
  const total = endH - startH;
  const pos = (fromIso: string, toIso: string) => {
    const a = Math.max(startH, Math.min(endH, hoursOf(fromIso)));
    const b = Math.max(startH, Math.min(endH, hoursOf(toIso)));
    return { top: `${((a - startH) / total) * 100}%`, height: `${(Math.max(b - a, 0) / total) * 100}%` };
  };
  const hours = Array.from({ length: total + 1 }, (_, i) => startH + i);
  return (
    <div class="timeline-wrap">
      <div class={`timeline h${total}`} role="list" aria-label={t('timeline', { name: day.asset.name, date: longDate(day.date, lang) })}>
        {hours.map((h) => (
          <div key={h} class="hour" aria-hidden="true" style={{ top: `${((h - startH) / total) * 100}%` }}>
            <span>{String(h).padStart(2, '0')}:00</span>
          </div>
        ))}
        {day.open.map((s, i) => (
          <div key={`o${i}`} class="band open" aria-hidden="true" style={pos(s.start, s.end)} />
        ))}
        {day.breaks.map((s, i) => (
          <div key={`b${i}`} class="band break" role="listitem" style={pos(s.start, s.end)}>
            <span>
              {t('breakTime')} {span(s.start, s.end, tz, lang)}
            </span>
          </div>
        ))}
        {day.bookings.map((b) => (
          <Fragment key={b._id}>
            {b.cleaningEndsAt && b.cleaningEndsAt > b.endDateTime && b.status !== 'cancelled' && b.status !== 'rejected' ? (
              <div class="band cleaning" role="listitem" style={pos(b.endDateTime, b.cleaningEndsAt)}>
                <span>
                  {t('cleaningBlock')} {span(b.endDateTime, b.cleaningEndsAt, tz, lang)}
                </span>
              </div>
            ) : null}
            <a href={`#/booking/${b._id}`} class={`slot status-${b.status}`} role="listitem" style={pos(b.startDateTime, b.endDateTime)}>
              <span class="slot-time">{span(b.startDateTime, b.endDateTime, tz, lang)}</span>
              <strong class="slot-title">{b.title || '—'}</strong>
              <span class="slot-meta">
                <StatusBadge status={b.status} /> {b.organizerName}
              </span>
            </a>
          </Fragment>
        ))}
      </div>
    </div>
  );
}

export function DayView({ assetId, date }: { assetId?: string; date?: string }) {
  const { t, lang } = useI18n();
  const day = useLoad(() => (assetId ? get<AssetDay>(`/ops/v1/assets/${assetId}/day`, { date }) : Promise.resolve(null)), [assetId, date]);
  useLiveChanges(['meeting', 'clock'], day.reload);
  return (
    <section class="day">
      <div class="screen-head">
        <h1>{t('navDay')}</h1>
        <AssetPicker assetId={assetId} date={date} />
      </div>
      {!assetId ? (
        <Empty>{t('chooseAsset')}</Empty>
      ) : (
        <Show value={day}>
          {(d) =>
            d && (
              <>
                <div class="day-controls">
                  <a class="btn" href={`#/day/${assetId}/${addDays(d.date, -1)}`} aria-label={t('prevDay')}>
                    ‹ <span class="hide-phone">{t('prevDay')}</span>
                  </a>
                  <label class="inline">
                    <span class="sr-only">{t('date')}</span>
                    <input
                      type="date"
                      value={d.date}
                      onChange={(e) => {
                        const v = (e.target as HTMLInputElement).value;
                        if (v) location.hash = `#/day/${assetId}/${v}`;
                      }}
                    />
                  </label>
                  <a class="btn" href={`#/day/${assetId}/${addDays(d.date, 1)}`} aria-label={t('nextDay')}>
                    <span class="hide-phone">{t('nextDay')}</span> ›
                  </a>
                  <a class="btn subtle" href={`#/day/${assetId}`}>
                    {t('today')}
                  </a>
                </div>
                <h2>
                  {d.asset.name} · {longDate(d.date, lang)}
                </h2>
                <p class="day-summary">
                  {d.open.length === 0 ? (
                    <span class="badge state-closed">{t('closedAllDay')}</span>
                  ) : (
                    d.open.map((s, i) => (
                      <span key={i} class="badge open-badge">
                        {t('openHours')} {span(s.start, s.end, d.timeZone, lang)}
                      </span>
                    ))
                  )}
                  {d.breaks.map((s, i) => (
                    <span key={`b${i}`} class="badge break-badge">
                      {t('breakTime')} {time(s.start, d.timeZone, lang)}–{time(s.end, d.timeZone, lang)}
                    </span>
                  ))}
                </p>
                {d.bookings.length === 0 && <Empty>{t('noBookingsDay')}</Empty>}
                <Timeline day={d} />
              </>
            )
          }
        </Show>
      )}
    </section>
  );
}
