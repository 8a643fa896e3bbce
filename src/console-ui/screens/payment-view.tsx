/**
 * A booking's payment view (GET /ops/v1/meetings/:id/payment), opened from the booking
 * detail's payment card: the provider and its reference, status, amount, failed attempts,
 * each provider event received (type, time, verified or not, outcome) and the voids/refunds.
 */
import { get, type PaymentDetail } from '../api.js';
import { dateTime, money } from '../format.js';
import { useI18n, type Key } from '../i18n.js';
import { DataTable, Show, useLoad, type Column } from '../ui.js';

type ProviderEvent = PaymentDetail['events'][number];
type Refund = PaymentDetail['refunds'][number];

const REFUND_STATUSES = new Set(['queued', 'pending', 'succeeded', 'failed']);

function PaymentSummary({ p, tz }: { p: PaymentDetail; tz: string }) {
  const { t, lang } = useI18n();
  return (
    <dl class="facts">
      <dt>{t('provider')}</dt>
      <dd>{p.provider}</dd>
      <dt>{t('providerRef')}</dt>
      <dd>
        <code class="ref">{p.providerRef ?? '—'}</code>
      </dd>
      <dt>{t('status')}</dt>
      <dd>
        <span class={`badge pay-${p.status}`}>{p.status}</span>
      </dd>
      <dt>{t('amount')}</dt>
      <dd>{money(p.amount, p.currency, lang)}</dd>
      <dt>{t('failedAttempts')}</dt>
      <dd>{p.failedAttempts}</dd>
      <dt>{t('invoiceNo')}</dt>
      <dd>{p.invoiceNo}</dd>
      <dt>{t('createdAt')}</dt>
      <dd>{dateTime(p.createdAt, tz, lang)}</dd>
      {p.settledAt ? (
        <>
          <dt>{t('settledAt')}</dt>
          <dd>{dateTime(p.settledAt, tz, lang)}</dd>
        </>
      ) : null}
    </dl>
  );
}

function EventsTable({ events, tz }: { events: ProviderEvent[]; tz: string }) {
  const { t, lang } = useI18n();
  const columns: Column<ProviderEvent>[] = [
    { header: t('receivedAt'), cell: (e) => dateTime(e.receivedAt, tz, lang) },
    { header: t('eventType'), cell: (e) => <code class="ref">{e.type}</code> },
    {
      header: t('verified'),
      cell: (e) => (
        <span class={`badge ${e.verified ? 'verified-yes' : 'verified-no'}`}>{t(e.verified ? 'verifiedYes' : 'verifiedNo')}</span>
      ),
    },
    { header: t('outcome'), cell: (e) => e.outcome ?? '—' },
  ];
  return (
    <>
      <h3>{t('providerEvents')}</h3>
      <DataTable columns={columns} rows={events} rowKey={(e) => e._id} empty={t('noProviderEvents')} />
    </>
  );
}

function RefundsTable({ refunds, tz }: { refunds: Refund[]; tz: string }) {
  const { t, lang } = useI18n();
  const status = (s: string) => (REFUND_STATUSES.has(s) ? t(`refundStatus_${s}` as Key) : s);
  const columns: Column<Refund>[] = [
    { header: t('refundKind'), cell: (r) => t(r.action === 'void' ? 'refund_void' : 'refund_refund') },
    { header: t('amount'), cell: (r) => money(r.amount, r.currency, lang) },
    { header: t('status'), cell: (r) => <span class={`badge pay-${r.status}`}>{status(r.status)}</span> },
    { header: t('providerRef'), cell: (r) => (r.providerRef ? <code class="ref">{r.providerRef}</code> : '—') },
    { header: t('reason'), cell: (r) => r.reason ?? '—' },
    { header: t('lastError'), cell: (r) => (r.lastError ? <span class="warn-text">{r.lastError}</span> : '—') },
    { header: t('refundUpdatedAt'), cell: (r) => dateTime(r.updatedAt, tz, lang) },
  ];
  return (
    <>
      <h3>{t('refunds')}</h3>
      <DataTable columns={columns} rows={refunds} rowKey={(r) => r._id} empty={t('noRefunds')} />
      {refunds.some((r) => r.status === 'pending') ? <p class="hint muted">{t('refundPendingHint')}</p> : null}
    </>
  );
}

/** The payment view of a booking's newest payment (a wide card below the booking's facts). */
export function PaymentView({ meetingId, tz, id }: { meetingId: string; tz: string; id: string }) {
  const { t } = useI18n();
  const p = useLoad(() => get<PaymentDetail>(`/ops/v1/meetings/${meetingId}/payment`), [meetingId]);
  return (
    <section class="card wide-card payment-view" id={id} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{t('paymentView')}</h2>
      <Show value={p}>
        {(d) => (
          <>
            <PaymentSummary p={d} tz={tz} />
            <EventsTable events={d.events} tz={tz} />
            <RefundsTable refunds={d.refunds} tz={tz} />
          </>
        )}
      </Show>
    </section>
  );
}
