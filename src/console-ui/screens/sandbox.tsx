/** Sandbox (development/uat): the service clock with advance buttons, and pending payments to settle or fail. */
import { get, post, type Clock, type PendingPayment } from '../api.js';
import { dateTime, money } from '../format.js';
import { useI18n } from '../i18n.js';
import { useLiveChanges } from '../live.js';
import { useSite, zoneOf } from '../site.js';
import { DataTable, Empty, Notice, Show, useAction, useLoad, type Column, type Loaded } from '../ui.js';

const STEPS = [5, 15, 60] as const;

function ClockCard({ clock, tz, onMoved }: { clock: Loaded<Clock>; tz: string; onMoved: () => void }) {
  const { t, lang } = useI18n();
  const clockAction = useAction();
  return (
    <div class="card">
      <h2>{t('clock')}</h2>
      <Show value={clock}>
        {(c) => (
          <dl class="facts">
            <dt>{t('clockNow')}</dt>
            <dd class="big" role="timer">
              {dateTime(c.now, tz, lang)}
            </dd>
            <dt>{t('offset')}</dt>
            <dd>{t('minutes', { n: Math.round(c.offsetMs / 60_000) })}</dd>
          </dl>
        )}
      </Show>
      <div class="row wrap">
        {STEPS.map((n) => (
          <button
            key={n}
            type="button"
            class="btn primary"
            disabled={clockAction.busy}
            onClick={() =>
              clockAction.run(
                () => post<Clock>('/ops/v1/clock', { advanceMinutes: n }),
                (c) => t('advanced', { t: dateTime(c.now, tz, lang) }),
                onMoved,
              )
            }
          >
            {t('advance', { n })}
          </button>
        ))}
      </div>
      <Notice text={clockAction.done} error={clockAction.error} />
    </div>
  );
}

function PaymentsCard({ payments, tz }: { payments: Loaded<PendingPayment[]>; tz: string }) {
  const { t, lang } = useI18n();
  const payAction = useAction();
  const columns: Column<PendingPayment>[] = [
    { header: t('booking'), cell: (p) => <a href={`#/booking/${p.meetingId}`}>{p.meetingId}</a> },
    { header: t('amount'), cell: (p) => money(p.amount, p.currency, lang) },
    { header: t('expires'), cell: (p) => dateTime(p.expiresAt, tz, lang) },
    {
      header: t('actions'),
      cell: (p) => (
        <div class="actions">
          <button
            type="button"
            class="btn small primary"
            disabled={payAction.busy}
            onClick={() => payAction.run(() => post(`/ops/v1/payments/${p._id}/settle`), t('settled'), payments.reload)}
          >
            {t('settle')}
          </button>
          <button
            type="button"
            class="btn small danger"
            disabled={payAction.busy}
            onClick={() => payAction.run(() => post(`/ops/v1/payments/${p._id}/fail`), t('failed'), payments.reload)}
          >
            {t('fail')}
          </button>
        </div>
      ),
    },
  ];
  return (
    <div class="card">
      <h2>{t('payments')}</h2>
      <Notice text={payAction.done} error={payAction.error} />
      <Show value={payments}>{(list) => <DataTable columns={columns} rows={list} rowKey={(p) => p._id} empty={t('noPayments')} />}</Show>
    </div>
  );
}

export function Sandbox() {
  const { t } = useI18n();
  const { site, sandbox } = useSite();
  const tz = zoneOf(site);
  const clock = useLoad(() => get<Clock>('/ops/v1/clock'), []);
  const payments = useLoad(() => get<PendingPayment[]>('/ops/v1/payments', { status: 'pending' }), []);
  useLiveChanges(['clock'], clock.reload);
  useLiveChanges(['meeting', 'clock'], payments.reload);
  if (!sandbox) {
    return (
      <section>
        <h1>{t('navSandbox')}</h1>
        <Empty>{t('sandboxOnly')}</Empty>
      </section>
    );
  }
  return (
    <section class="sandbox">
      <div class="screen-head">
        <h1>{t('navSandbox')}</h1>
      </div>
      <div class="two-col">
        <ClockCard
          clock={clock}
          tz={tz}
          onMoved={() => {
            clock.reload();
            payments.reload();
          }}
        />
        <PaymentsCard payments={payments} tz={tz} />
      </div>
    </section>
  );
}
