/** Webhook listeners (state, consecutive failures, re-enable) and a listener's delivery log (redeliver). */
import { get, getPage, post, type Delivery, type Listener } from '../api.js';
import { dateTime } from '../format.js';
import { useI18n } from '../i18n.js';
import { useLiveChanges } from '../live.js';
import { useSite, zoneOf } from '../site.js';
import { Empty, Notice, Show, useAction, useLoad } from '../ui.js';

function Deliveries({ listener, onChange }: { listener: Listener; onChange: () => void }) {
  const { t, lang } = useI18n();
  const { site } = useSite();
  const tz = zoneOf(site, listener.projectId);
  const log = useLoad(() => getPage<Delivery>(`/ops/v1/webhooks/${listener._id}/deliveries`, { limit: 50 }), [listener._id]);
  useLiveChanges(['delivery'], log.reload);
  const action = useAction();
  return (
    <div class="card">
      <h2>{t('deliveriesOf', { key: listener.key ?? listener._id })}</h2>
      <Notice text={action.done} error={action.error} />
      <Show value={log}>
        {({ data }) =>
          data.length === 0 ? (
            <Empty>{t('noDeliveries')}</Empty>
          ) : (
            <table class="table cards-on-phone">
              <thead>
                <tr>
                  <th scope="col">{t('created')}</th>
                  <th scope="col">{t('type')}</th>
                  <th scope="col">{t('status')}</th>
                  <th scope="col">{t('attempts')}</th>
                  <th scope="col">{t('lastStatus')}</th>
                  <th scope="col">{t('nextAttempt')}</th>
                  <th scope="col">{t('actions')}</th>
                </tr>
              </thead>
              <tbody>
                {data.map((d) => (
                  <tr key={d.id}>
                    <td data-label={t('created')}>{dateTime(d.createdAt, tz, lang)}</td>
                    <td data-label={t('type')}>
                      <code>{d.type}</code>
                    </td>
                    <td data-label={t('status')}>
                      <span class={`badge delivery-${d.status}`}>{d.status}</span>
                    </td>
                    <td data-label={t('attempts')}>{d.attempts}</td>
                    <td data-label={t('lastStatus')}>
                      {d.lastStatus ?? '—'}
                      {d.lastError ? <span class="muted small-text"> {d.lastError}</span> : null}
                    </td>
                    <td data-label={t('nextAttempt')}>{dateTime(d.nextAttemptAt, tz, lang)}</td>
                    <td data-label={t('actions')}>
                      <button
                        type="button" class="btn small" disabled={action.busy} aria-label={`${t('redeliver')} ${d.type} ${d.id}`}
                        onClick={() => action.run(() => post(`/ops/v1/deliveries/${d.id}/redeliver`), t('redelivered'), () => {
                          log.reload();
                          onChange();
                        })}
                      >
                        {t('redeliver')}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Show>
    </div>
  );
}

export function Webhooks({ listenerId }: { listenerId?: string }) {
  const { t } = useI18n();
  const { site } = useSite();
  const list = useLoad(() => get<Listener[]>('/ops/v1/webhooks'), []);
  useLiveChanges(['delivery'], list.reload);
  const action = useAction();
  return (
    <section class="webhooks">
      <div class="screen-head">
        <h1>{t('navWebhooks')}</h1>
      </div>
      <Show value={list}>
        {(listeners) => {
          const chosen = listeners.find((l) => l._id === listenerId);
          return (
            <>
              <div class="card">
                <h2>{t('listeners')}</h2>
                <Notice text={action.done} error={action.error} />
                {listeners.length === 0 ? (
                  <Empty>{t('noListeners')}</Empty>
                ) : (
                  <table class="table cards-on-phone">
                    <thead>
                      <tr>
                        <th scope="col">{t('name')}</th>
                        <th scope="col">{t('project')}</th>
                        <th scope="col">{t('url')}</th>
                        <th scope="col">{t('state')}</th>
                        <th scope="col">{t('failures')}</th>
                        <th scope="col">{t('actions')}</th>
                      </tr>
                    </thead>
                    <tbody>
                      {listeners.map((l) => (
                        <tr key={l._id} class={l._id === listenerId ? 'chosen' : undefined}>
                          <td data-label={t('name')}>
                            <div>
                              <a href={`#/webhooks/${l._id}`} aria-current={l._id === listenerId ? 'true' : undefined}>
                                {l.key ?? l._id}
                              </a>
                              <div class="events small-text">
                                <span class="muted">{t('events')}:</span>{' '}
                                {l.events.length === 0 ? (
                                  <span class="muted">—</span>
                                ) : (
                                  <ul class="event-list">
                                    {l.events.map((e) => (
                                      <li key={e}>
                                        <code>{e}</code>
                                      </li>
                                    ))}
                                  </ul>
                                )}
                              </div>
                            </div>
                          </td>
                          <td data-label={t('project')}>{site.projects.find((p) => p._id === l.projectId)?.name ?? l.projectId}</td>
                          <td data-label={t('url')} class="url">
                            <code>{l.url}</code>
                          </td>
                          <td data-label={t('state')}>
                            <span class={`badge ${l.enabled ? 'listener-on' : 'listener-off'}`}>{l.enabled ? t('enabled') : t('disabled')}</span>
                          </td>
                          <td data-label={t('failures')} class={l.consecutiveFailures > 0 ? 'warn-text' : undefined}>
                            {l.consecutiveFailures}
                          </td>
                          <td data-label={t('actions')}>
                            <div class="actions">
                              <a class="btn small" href={`#/webhooks/${l._id}`}>
                                {t('deliveries')}
                              </a>
                              {(!l.enabled || l.consecutiveFailures > 0) && (
                                <button
                                  type="button" class="btn small" disabled={action.busy}
                                  onClick={() => action.run(() => post(`/ops/v1/webhooks/${l._id}/enable`), t('reenabled'), list.reload)}
                                >
                                  {t('reenable')}
                                </button>
                              )}
                            </div>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
              </div>
              {chosen ? <Deliveries listener={chosen} onChange={list.reload} /> : listeners.length > 0 ? <p class="muted hint">{t('chooseListener')}</p> : null}
            </>
          );
        }}
      </Show>
    </section>
  );
}
