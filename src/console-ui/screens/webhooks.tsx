/** Webhook listeners (state, consecutive failures, re-enable) and a listener's delivery log (redeliver). */
import { get, getPage, post, type Delivery, type Listener } from '../api.js';
import { dateTime } from '../format.js';
import { useI18n } from '../i18n.js';
import { useLiveChanges } from '../live.js';
import { useSite, zoneOf } from '../site.js';
import { DataTable, Notice, Show, useAction, useLoad, type Column } from '../ui.js';

function Deliveries({ listener, onChange }: { listener: Listener; onChange: () => void }) {
  const { t, lang } = useI18n();
  const { site } = useSite();
  const tz = zoneOf(site, listener.projectId);
  const log = useLoad(() => getPage<Delivery>(`/ops/v1/webhooks/${listener._id}/deliveries`, { limit: 50 }), [listener._id]);
  useLiveChanges(['delivery'], log.reload);
  const action = useAction();
  const columns: Column<Delivery>[] = [
    { header: t('created'), cell: (d) => dateTime(d.createdAt, tz, lang) },
    { header: t('type'), cell: (d) => <code>{d.type}</code> },
    { header: t('status'), cell: (d) => <span class={`badge delivery-${d.status}`}>{d.status}</span> },
    { header: t('attempts'), cell: (d) => d.attempts },
    {
      header: t('lastStatus'),
      cell: (d) => (
        <>
          {d.lastStatus ?? '—'}
          {d.lastError ? <span class="muted small-text"> {d.lastError}</span> : null}
        </>
      ),
    },
    { header: t('nextAttempt'), cell: (d) => dateTime(d.nextAttemptAt, tz, lang) },
    {
      header: t('actions'),
      cell: (d) => (
        <button
          type="button"
          class="btn small"
          disabled={action.busy}
          aria-label={`${t('redeliver')} ${d.type} ${d.id}`}
          onClick={() =>
            action.run(
              () => post(`/ops/v1/deliveries/${d.id}/redeliver`),
              t('redelivered'),
              () => {
                log.reload();
                onChange();
              },
            )
          }
        >
          {t('redeliver')}
        </button>
      ),
    },
  ];
  return (
    <div class="card">
      <h2>{t('deliveriesOf', { key: listener.key ?? listener._id })}</h2>
      <Notice text={action.done} error={action.error} />
      <Show value={log}>{({ data }) => <DataTable columns={columns} rows={data} rowKey={(d) => d.id} empty={t('noDeliveries')} />}</Show>
    </div>
  );
}

/** The event types a listener receives, as a list (or a dash). */
function ListenerEvents({ events }: { events: string[] }) {
  const { t } = useI18n();
  return (
    <div class="events small-text">
      <span class="muted">{t('events')}:</span>{' '}
      {events.length === 0 ? (
        <span class="muted">—</span>
      ) : (
        <ul class="event-list">
          {events.map((e) => (
            <li key={e}>
              <code>{e}</code>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Listeners({ listeners, listenerId, onChange }: { listeners: Listener[]; listenerId?: string; onChange: () => void }) {
  const { t } = useI18n();
  const { site } = useSite();
  const action = useAction();
  const columns: Column<Listener>[] = [
    {
      header: t('name'),
      cell: (l) => (
        <div>
          <a href={`#/webhooks/${l._id}`} aria-current={l._id === listenerId ? 'true' : undefined}>
            {l.key ?? l._id}
          </a>
          <ListenerEvents events={l.events} />
        </div>
      ),
    },
    { header: t('project'), cell: (l) => site.projects.find((p) => p._id === l.projectId)?.name ?? l.projectId },
    { header: t('url'), class: () => 'url', cell: (l) => <code>{l.url}</code> },
    {
      header: t('state'),
      cell: (l) => <span class={`badge ${l.enabled ? 'listener-on' : 'listener-off'}`}>{l.enabled ? t('enabled') : t('disabled')}</span>,
    },
    { header: t('failures'), class: (l) => (l.consecutiveFailures > 0 ? 'warn-text' : undefined), cell: (l) => l.consecutiveFailures },
    {
      header: t('actions'),
      cell: (l) => (
        <div class="actions">
          <a class="btn small" href={`#/webhooks/${l._id}`}>
            {t('deliveries')}
          </a>
          {(!l.enabled || l.consecutiveFailures > 0) && (
            <button
              type="button"
              class="btn small"
              disabled={action.busy}
              onClick={() => action.run(() => post(`/ops/v1/webhooks/${l._id}/enable`), t('reenabled'), onChange)}
            >
              {t('reenable')}
            </button>
          )}
        </div>
      ),
    },
  ];
  return (
    <div class="card">
      <h2>{t('listeners')}</h2>
      <Notice text={action.done} error={action.error} />
      <DataTable
        columns={columns}
        rows={listeners}
        rowKey={(l) => l._id}
        empty={t('noListeners')}
        rowClass={(l) => (l._id === listenerId ? 'chosen' : undefined)}
      />
    </div>
  );
}

export function Webhooks({ listenerId }: { listenerId?: string }) {
  const { t } = useI18n();
  const list = useLoad(() => get<Listener[]>('/ops/v1/webhooks'), []);
  useLiveChanges(['delivery'], list.reload);
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
              <Listeners listeners={listeners} listenerId={listenerId} onChange={list.reload} />
              {chosen ? (
                <Deliveries listener={chosen} onChange={list.reload} />
              ) : listeners.length > 0 ? (
                <p class="muted hint">{t('chooseListener')}</p>
              ) : null}
            </>
          );
        }}
      </Show>
    </section>
  );
}
