/** One booking (no PIN): times, place, organizer, history, payment state, and the staff cancel with a confirm step. */
import { useState } from 'preact/hooks';
import { get, post, type HistoryEntry, type Meeting } from '../api.js';
import { dateTime, money, span } from '../format.js';
import { label, useI18n } from '../i18n.js';
import { useLiveChanges } from '../live.js';
import { useSite, zoneOf } from '../site.js';
import { Empty, Notice, Show, StatusBadge, useAction, useLoad } from '../ui.js';

/** "Name <email>", or just the name when the organizer has no email (an app books as itself without one). */
export function organizerText(o: NonNullable<Meeting['organizer']>): string {
  const name = o.displayName || o.name;
  if (!o.email) return name || '—';
  return name ? `${name} <${o.email}>` : o.email;
}

/** Who acted: the member's or app's name, or staff / the service / a calendar, with the kind beside it (the raw id only as a tooltip). */
function HistoryActor({ entry }: { entry: HistoryEntry }) {
  const { t } = useI18n();
  const kind = entry.actorKind;
  const name =
    entry.actorName ??
    (kind === 'staff' ? t('actorStaff') : kind === 'system' ? t('actorSystem') : kind === 'calendar' ? t('actorCalendar') : t('actorUnknown'));
  return (
    <span class="actor" title={entry.actor}>
      <span class="actor-name">{name}</span>
      {kind ? <span class={`badge actor-kind actor-${kind}`}>{label(t, 'actor_', kind)}</span> : null}
    </span>
  );
}

export const CANCELLABLE = new Set(['unpaid', 'active']);

/** The cancel button, then a confirm step with an optional reason. */
export function CancelBooking({ meeting, onDone }: { meeting: Meeting; onDone: () => void }) {
  const { t } = useI18n();
  const [confirming, setConfirming] = useState(false);
  const [reason, setReason] = useState('');
  const action = useAction();
  if (!CANCELLABLE.has(meeting.status)) return <Notice text={action.done} />;
  const confirmId = `cancel-${meeting._id}`;
  return (
    <div class="cancel-box">
      {!confirming ? (
        <button type="button" class="btn danger" onClick={() => setConfirming(true)}>
          {t('cancelBooking')}
        </button>
      ) : (
        <div class="confirm" role="group" aria-labelledby={confirmId}>
          <p id={confirmId}>{t('cancelConfirm', { title: meeting.title || '—' })}</p>
          <label for={`${confirmId}-reason`}>{t('cancelReason')}</label>
          <input id={`${confirmId}-reason`} type="text" maxLength={500} value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
          <div class="row">
            <button
              type="button" class="btn danger" disabled={action.busy}
              onClick={() => action.run(() => post(`/ops/v1/meetings/${meeting._id}/cancel`, reason.trim() ? { reason: reason.trim() } : {}), t('cancelled'), () => {
                setConfirming(false);
                onDone();
              })}
            >
              {t('yesCancel')}
            </button>
            <button type="button" class="btn" onClick={() => setConfirming(false)}>
              {t('keep')}
            </button>
          </div>
        </div>
      )}
      <Notice text={action.done} error={action.error} />
    </div>
  );
}

export function BookingDetail({ id }: { id: string }) {
  const { t, lang } = useI18n();
  const { site } = useSite();
  const m = useLoad(() => get<Meeting>(`/ops/v1/meetings/${id}`), [id]);
  useLiveChanges(['meeting'], m.reload);
  return (
    <section class="booking">
      <div class="screen-head">
        <button type="button" class="btn subtle" onClick={() => history.back()}>
          ‹ {t('back')}
        </button>
        <h1>{t('bookingDetail')}</h1>
      </div>
      <Show value={m}>
        {(b) => {
          const tz = zoneOf(site, b.projectId);
          const assetId = b.meetingRoomId ?? b.deskId;
          return (
            <div class="detail-grid">
              <div class="card">
                <h2>
                  {b.title || '—'} <StatusBadge status={b.status} />
                </h2>
                <dl class="facts">
                  <dt>{t('when')}</dt>
                  <dd>
                    {dateTime(b.startDateTime, tz, lang)} ({span(b.startDateTime, b.endDateTime, tz, lang)})
                  </dd>
                  <dt>{t('where')}</dt>
                  <dd>{assetId ? <a href={`#/day/${assetId}`}>{b.meetingRoomName ?? b.deskName ?? assetId}</a> : '—'}</dd>
                  <dt>{t('organizer')}</dt>
                  <dd>{b.organizer ? organizerText(b.organizer) : '—'}</dd>
                  {b.attendees && b.attendees.length > 0 && (
                    <>
                      <dt>{t('attendees')}</dt>
                      <dd>{b.attendees.map((a) => a.name || a.email).join(', ')}</dd>
                    </>
                  )}
                  {b.cancelReason ? (
                    <>
                      <dt>{t('reason')}</dt>
                      <dd>{b.cancelReason}</dd>
                    </>
                  ) : null}
                </dl>
                <CancelBooking meeting={b} onDone={m.reload} />
              </div>
              <div class="card">
                <h2>{t('payment')}</h2>
                {b.payment ? (
                  <dl class="facts">
                    <dt>{t('status')}</dt>
                    <dd>
                      <span class={`badge pay-${b.payment.status}`}>{b.payment.status}</span>
                    </dd>
                    <dt>{t('amount')}</dt>
                    <dd>{money(b.payment.amount, b.payment.currency, lang)}</dd>
                    <dt>{t('dueAt')}</dt>
                    <dd>{dateTime(b.payment.dueAt, tz, lang)}</dd>
                  </dl>
                ) : (
                  <Empty>{t('noPayment')}</Empty>
                )}
              </div>
              <div class="card wide-card">
                <h2>{t('history')}</h2>
                {!b.history || b.history.length === 0 ? (
                  <Empty>{t('noHistory')}</Empty>
                ) : (
                  <table class="table cards-on-phone">
                    <thead>
                      <tr>
                        <th scope="col">{t('at')}</th>
                        <th scope="col">{t('action')}</th>
                        <th scope="col">{t('actor')}</th>
                        <th scope="col">{t('source')}</th>
                        <th scope="col">{t('reason')}</th>
                      </tr>
                    </thead>
                    <tbody>
                      {b.history.map((h, i) => (
                        <tr key={i}>
                          <td data-label={t('at')}>{dateTime(h.at, tz, lang)}</td>
                          <td data-label={t('action')}>{h.action}</td>
                          <td data-label={t('actor')}>
                            <HistoryActor entry={h} />
                          </td>
                          <td data-label={t('source')}>{h.source}</td>
                          <td data-label={t('reason')}>{h.reason ?? '—'}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
              </div>
            </div>
          );
        }}
      </Show>
    </section>
  );
}
