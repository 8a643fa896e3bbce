/** One booking (no PIN): times, place, organizer, history, payment state, and the staff cancel with a confirm step. */
import { useState } from 'preact/hooks';
import { get, post, type HistoryEntry, type Meeting, type MeetingDetail } from '../api.js';
import { dateTime, money, span } from '../format.js';
import { label, useI18n } from '../i18n.js';
import { useLiveChanges } from '../live.js';
import { useSite, zoneOf } from '../site.js';
import { DataTable, Empty, Notice, Show, StatusBadge, useAction, useLoad, type Column } from '../ui.js';
import { PaymentView } from './payment-view.js';

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
    (kind === 'staff'
      ? t('actorStaff')
      : kind === 'system'
        ? t('actorSystem')
        : kind === 'calendar'
          ? t('actorCalendar')
          : t('actorUnknown'));
  return (
    <span class="actor" title={entry.actor}>
      <span class="actor-name">{name}</span>
      {kind ? <span class={`badge actor-kind actor-${kind}`}>{label(t, 'actor_', kind)}</span> : null}
    </span>
  );
}

export const CANCELLABLE = new Set(['unpaid', 'active']);

/** The cancel button, then a confirm step with an optional reason. */
export function CancelBooking({ meeting, onDone }: { meeting: Pick<Meeting, '_id' | 'status' | 'title'>; onDone: () => void }) {
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
          <input
            id={`${confirmId}-reason`}
            type="text"
            maxLength={500}
            value={reason}
            onInput={(e) => setReason((e.target as HTMLInputElement).value)}
          />
          <div class="row">
            <button
              type="button"
              class="btn danger"
              disabled={action.busy}
              onClick={() =>
                action.run(
                  () => post(`/ops/v1/meetings/${meeting._id}/cancel`, reason.trim() ? { reason: reason.trim() } : {}),
                  t('cancelled'),
                  () => {
                    setConfirming(false);
                    onDone();
                  },
                )
              }
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

/** The booking's facts: when, where, organizer, attendees, cancel reason; and the staff cancel. */
function BookingFacts({ b, tz, onChange }: { b: MeetingDetail; tz: string; onChange: () => void }) {
  const { t, lang } = useI18n();
  const assetId = b.meetingRoomId ?? b.deskId;
  return (
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
      <CancelBooking meeting={b} onDone={onChange} />
    </div>
  );
}

function PaymentFacts({
  payment,
  tz,
  open,
  onToggle,
}: {
  payment: MeetingDetail['payment'];
  tz: string;
  open: boolean;
  onToggle: () => void;
}) {
  const { t, lang } = useI18n();
  return (
    <div class="card">
      <h2>{t('payment')}</h2>
      {payment ? (
        <dl class="facts">
          <dt>{t('status')}</dt>
          <dd>
            <span class={`badge pay-${payment.status}`}>{payment.status}</span>
          </dd>
          <dt>{t('amount')}</dt>
          <dd>{money(payment.amount, payment.currency, lang)}</dd>
          <dt>{t('dueAt')}</dt>
          <dd>{dateTime(payment.dueAt, tz, lang)}</dd>
        </dl>
      ) : (
        <Empty>{t('noPayment')}</Empty>
      )}
      {payment ? (
        <button type="button" class="btn" aria-expanded={open} aria-controls={PAYMENT_VIEW_ID} onClick={onToggle}>
          {t(open ? 'hidePaymentDetails' : 'paymentDetails')}
        </button>
      ) : null}
    </div>
  );
}

function HistoryTable({ history, tz }: { history: HistoryEntry[]; tz: string }) {
  const { t, lang } = useI18n();
  const columns: Column<HistoryEntry>[] = [
    { header: t('at'), cell: (h) => dateTime(h.at, tz, lang) },
    { header: t('action'), cell: (h) => h.action },
    { header: t('actor'), cell: (h) => <HistoryActor entry={h} /> },
    { header: t('source'), cell: (h) => h.source },
    { header: t('reason'), cell: (h) => h.reason ?? '—' },
  ];
  return (
    <div class="card wide-card">
      <h2>{t('history')}</h2>
      <DataTable columns={columns} rows={history} rowKey={(_, i) => i} empty={t('noHistory')} />
    </div>
  );
}

const PAYMENT_VIEW_ID = 'payment-view';

export function BookingDetail({ id }: { id: string }) {
  const { t } = useI18n();
  const [paymentOpen, setPaymentOpen] = useState(false);
  const { site } = useSite();
  const m = useLoad(() => get<MeetingDetail>(`/ops/v1/meetings/${id}`), [id]);
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
          return (
            <div class="detail-grid">
              <BookingFacts b={b} tz={tz} onChange={m.reload} />
              <PaymentFacts payment={b.payment} tz={tz} open={paymentOpen} onToggle={() => setPaymentOpen(!paymentOpen)} />
              {b.payment && paymentOpen ? <PaymentView meetingId={b._id} tz={tz} id={PAYMENT_VIEW_ID} /> : null}
              <HistoryTable history={b.history} tz={tz} />
            </div>
          );
        }}
      </Show>
    </section>
  );
}
