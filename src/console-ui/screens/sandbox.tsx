/** Sandbox (development/uat): the service clock with advance buttons, and pending payments to settle or fail. */
import { get, post, type Clock, type PendingPayment } from '../api.js';
import { dateTime, money } from '../format.js';
import { useI18n } from '../i18n.js';
import { useLiveChanges } from '../live.js';
import { useSite, zoneOf } from '../site.js';
import { Empty, Notice, Show, useAction, useLoad } from '../ui.js';

const STEPS = [5, 15, 60] as const;

export function Sandbox() {
  const { t, lang } = useI18n();
  const { site, sandbox } = useSite();
  const tz = zoneOf(site);
  const clock = useLoad(() => get<Clock>('/ops/v1/clock'), []);
  const payments = useLoad(() => get<PendingPayment[]>('/ops/v1/payments', { status: 'pending' }), []);
  useLiveChanges(['clock'], clock.reload);
  useLiveChanges(['meeting', 'clock'], payments.reload);
  const clockAction = useAction();
  const payAction = useAction();
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
        <div class="card">
          <h2>{t('clock')}</h2>
          <Show value={clock}>
            {(c) => (
              <dl class="facts">
                <dt>{t('clockNow')}</dt>
                <dd class="big" role="timer">{dateTime(c.now, tz, lang)}</dd>
                <dt>{t('offset')}</dt>
                <dd>{t('minutes', { n: Math.round(c.offsetMs / 60_000) })}</dd>
              </dl>
            )}
          </Show>
          <div class="row wrap">
            {STEPS.map((n) => (
              <button
                key={n} type="button" class="btn primary" disabled={clockAction.busy}
                onClick={() =>
                  clockAction.run(() => post<Clock>('/ops/v1/clock', { advanceMinutes: n }), (c) => t('advanced', { t: dateTime(c.now, tz, lang) }), () => {
                    clock.reload();
                    payments.reload();
                  })
                }
              >
                {t('advance', { n })}
              </button>
            ))}
          </div>
          <Notice text={clockAction.done} error={clockAction.error} />
        </div>
        <div class="card">
          <h2>{t('payments')}</h2>
          <Notice text={payAction.done} error={payAction.error} />
          <Show value={payments}>
            {(list) =>
              list.length === 0 ? (
                <Empty>{t('noPayments')}</Empty>
              ) : (
                <table class="table cards-on-phone">
                  <thead>
                    <tr>
                      <th scope="col">{t('booking')}</th>
                      <th scope="col">{t('amount')}</th>
                      <th scope="col">{t('expires')}</th>
                      <th scope="col">{t('actions')}</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.map((p) => (
                      <tr key={p._id}>
                        <td data-label={t('booking')}>
                          <a href={`#/booking/${p.meetingId}`}>{p.meetingId}</a>
                        </td>
                        <td data-label={t('amount')}>{money(p.amount, p.currency, lang)}</td>
                        <td data-label={t('expires')}>{dateTime(p.expiresAt, tz, lang)}</td>
                        <td data-label={t('actions')}>
                          <div class="actions">
                            <button type="button" class="btn small primary" disabled={payAction.busy}
                              onClick={() => payAction.run(() => post(`/ops/v1/payments/${p._id}/settle`), t('settled'), payments.reload)}>
                              {t('settle')}
                            </button>
                            <button type="button" class="btn small danger" disabled={payAction.busy}
                              onClick={() => payAction.run(() => post(`/ops/v1/payments/${p._id}/fail`), t('failed'), payments.reload)}>
                              {t('fail')}
                            </button>
                          </div>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )
            }
          </Show>
        </div>
      </div>
    </section>
  );
}
