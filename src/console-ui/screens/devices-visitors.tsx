/** Devices (sync state, pending changes) and the day's visitor invites: create one, cancel one. */
import { useState } from 'preact/hooks';
import { get, post, serviceNow, type Device, type Invite } from '../api.js';
import { dateTime, localDate, localInstant, span, time } from '../format.js';
import { useI18n } from '../i18n.js';
import { useLiveChanges } from '../live.js';
import { useSite, zoneOf } from '../site.js';
import { DataTable, Notice, ProjectOptions, Show, StatusBadge, useAction, useLoad, type Column } from '../ui.js';

function Devices() {
  const { t, lang } = useI18n();
  const { site } = useSite();
  const tz = zoneOf(site);
  const list = useLoad(() => get<Device[]>('/ops/v1/devices'), []);
  useLiveChanges(['device'], list.reload);
  const columns: Column<Device>[] = [
    { header: t('name'), cell: (d) => d.name },
    { header: t('kind'), cell: (d) => <code>{d.kind}</code> },
    {
      header: t('state'),
      cell: (d) => <span class={`badge ${d.online ? 'device-on' : 'device-off'}`}>{d.online ? t('online') : t('offline')}</span>,
    },
    {
      header: t('sync'),
      cell: (d) => (
        <span class={`badge ${d.pendingChanges === 0 ? 'sync-ok' : 'sync-pending'}`}>
          {d.pendingChanges === 0 ? t('inSync') : t('pending', { n: d.pendingChanges })}
        </span>
      ),
    },
    { header: t('lastSynced'), cell: (d) => (d.lastSyncedAt ? dateTime(d.lastSyncedAt, tz, lang) : t('never')) },
  ];
  return (
    <div class="card">
      <h2>{t('devices')}</h2>
      <Show value={list}>{(devices) => <DataTable columns={columns} rows={devices} rowKey={(d) => d._id} empty={t('noDevices')} />}</Show>
    </div>
  );
}

function InviteForm({ projectId, date, tz, onCreated }: { projectId: string; date: string; tz: string; onCreated: () => void }) {
  const { t } = useI18n();
  const { site } = useSite();
  const users = (site.users ?? []).filter((u) => !u.projectIds || u.projectIds.includes(projectId));
  const [f, setF] = useState({
    visitorName: '',
    visitorEmail: '',
    hostUserId: users[0]?._id ?? '',
    start: '09:00',
    end: '',
    licensePlate: '',
    visitPurpose: '',
  });
  const set = (patch: Partial<typeof f>) => setF((x) => ({ ...x, ...patch }));
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    const body = {
      projectId,
      hostUserId: f.hostUserId.trim(),
      visitorName: f.visitorName.trim(),
      ...(f.visitorEmail.trim() ? { visitorEmail: f.visitorEmail.trim() } : {}),
      startDateTime: new Date(localInstant(date, f.start, tz)).toISOString(),
      endDateTime: f.end ? new Date(localInstant(date, f.end, tz)).toISOString() : null,
      ...(f.licensePlate.trim() ? { licensePlate: f.licensePlate.trim() } : {}),
      ...(f.visitPurpose.trim() ? { visitPurpose: f.visitPurpose.trim() } : {}),
    };
    action.run(
      () => post('/ops/v1/visitors/invites', body),
      t('created_ok', { name: body.visitorName }),
      () => {
        set({ visitorName: '', visitorEmail: '', licensePlate: '', visitPurpose: '' });
        onCreated();
      },
    );
  };
  return (
    <form class="invite-form" onSubmit={submit}>
      <h3>{t('newInvite')}</h3>
      <div class="form-grid">
        <label>
          <span>{t('visitor')}</span>
          <input
            required
            maxLength={200}
            value={f.visitorName}
            onInput={(e) => set({ visitorName: (e.target as HTMLInputElement).value })}
          />
        </label>
        <label>
          <span>{t('email')}</span>
          <input type="email" value={f.visitorEmail} onInput={(e) => set({ visitorEmail: (e.target as HTMLInputElement).value })} />
        </label>
        <HostField users={users} value={f.hostUserId} onChange={(hostUserId) => set({ hostUserId })} />
        <label>
          <span>{t('start')}</span>
          <input type="time" required value={f.start} onInput={(e) => set({ start: (e.target as HTMLInputElement).value })} />
        </label>
        <label>
          <span>{t('end')}</span>
          <input type="time" value={f.end} onInput={(e) => set({ end: (e.target as HTMLInputElement).value })} />
        </label>
        <label>
          <span>{t('plate')}</span>
          <input maxLength={32} value={f.licensePlate} onInput={(e) => set({ licensePlate: (e.target as HTMLInputElement).value })} />
        </label>
        <label class="span2">
          <span>{t('purpose')}</span>
          <input maxLength={500} value={f.visitPurpose} onInput={(e) => set({ visitPurpose: (e.target as HTMLInputElement).value })} />
        </label>
      </div>
      <button type="submit" class="btn primary" disabled={action.busy}>
        {t('create')}
      </button>
      <Notice text={action.done} error={action.error} />
    </form>
  );
}

/** The invite's host: a member picked from the project's users, or an id typed in when the site lists none. */
function HostField({ users, value, onChange }: { users: { _id: string; name: string }[]; value: string; onChange: (id: string) => void }) {
  const { t } = useI18n();
  return users.length > 0 ? (
    <label>
      <span id="invite-host-label">{t('host')}</span>
      {/* Named by its caption alone (a wrapping label would add every option's text to the name). */}
      <select required aria-labelledby="invite-host-label" value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {users.map((u) => (
          <option key={u._id} value={u._id}>
            {u.name}
          </option>
        ))}
      </select>
    </label>
  ) : (
    <label>
      <span>{t('hostId')}</span>
      <input required pattern="[0-9a-f]{24}" value={value} onInput={(e) => onChange((e.target as HTMLInputElement).value)} />
    </label>
  );
}

function CancelInvite({ invite, onDone }: { invite: Invite; onDone: () => void }) {
  const { t } = useI18n();
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  if (invite.status !== 'invited') return null;
  return confirming ? (
    <span class="confirm inline-confirm" role="group" aria-label={t('confirmCancelInvite', { name: invite.visitorName })}>
      <span>{t('confirmCancelInvite', { name: invite.visitorName })}</span>
      <button
        type="button"
        class="btn small danger"
        disabled={action.busy}
        onClick={() => action.run(() => post(`/ops/v1/visitors/invites/${invite._id}/cancel`), t('inviteCancelled'), onDone)}
      >
        {t('yes')}
      </button>
      <button type="button" class="btn small" onClick={() => setConfirming(false)}>
        {t('no')}
      </button>
      <Notice error={action.error} />
    </span>
  ) : (
    <button type="button" class="btn small danger" onClick={() => setConfirming(true)}>
      {t('cancelInvite')}
    </button>
  );
}

function Visitors() {
  const { t, lang } = useI18n();
  const { site, sandbox } = useSite();
  const [projectId, setProjectId] = useState(site.projects[0]?._id ?? '');
  const tz = zoneOf(site, projectId);
  const [date, setDate] = useState<string | null>(null);
  const today = useLoad(async () => localDate(await serviceNow(), tz), [tz, sandbox]);
  const day = date ?? today.data;
  const invites = useLoad(
    () => (projectId && day ? get<Invite[]>('/ops/v1/visitors/invites', { projectId, date: day }) : Promise.resolve([] as Invite[])),
    [projectId, day],
  );
  useLiveChanges(['visitor'], invites.reload);
  const columns: Column<Invite>[] = [
    {
      header: t('visitor'),
      cell: (i) => (
        <>
          <strong>{i.visitorName}</strong>
          {i.visitPurpose ? <div class="muted small-text">{i.visitPurpose}</div> : null}
        </>
      ),
    },
    {
      header: t('when'),
      cell: (i) =>
        i.endDateTime
          ? span(i.startDateTime, i.endDateTime, tz, lang)
          : `${time(i.startDateTime, tz, lang)} · ${t('validUntil')} ${time(i.validUntil, tz, lang)}`,
    },
    { header: t('plate'), cell: (i) => i.licensePlate ?? '—' },
    { header: t('status'), cell: (i) => <StatusBadge status={i.status} kind="invite_" /> },
    {
      header: t('actions'),
      cell: (i) => (
        <div class="actions">
          <CancelInvite invite={i} onDone={invites.reload} />
        </div>
      ),
    },
  ];
  if (site.projects.length === 0) return null;
  return (
    <div class="card">
      <h2>{t('visitors')}</h2>
      <div class="row wrap">
        <label class="inline">
          <span>{t('project')}</span>
          <select value={projectId} onChange={(e) => setProjectId((e.target as HTMLSelectElement).value)}>
            <ProjectOptions projects={site.projects} />
          </select>
        </label>
        <label class="inline">
          <span>{t('date')}</span>
          <input type="date" value={day ?? ''} onChange={(e) => setDate((e.target as HTMLInputElement).value || null)} />
        </label>
      </div>
      <Show value={invites}>{(list) => <DataTable columns={columns} rows={list} rowKey={(i) => i._id} empty={t('noInvites')} />}</Show>
      {day && <InviteForm projectId={projectId} date={day} tz={tz} onCreated={invites.reload} />}
    </div>
  );
}

export function DevicesVisitors() {
  const { t } = useI18n();
  return (
    <section class="devices">
      <div class="screen-head">
        <h1>{t('navDevices')}</h1>
      </div>
      <div class="two-col">
        <Devices />
        <Visitors />
      </div>
    </section>
  );
}
