/** Small shared pieces: loading, error and empty states, status badges, the data hook, an inline confirm, the data table. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type AssetState } from './api.js';
import { label, useI18n } from './i18n.js';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (and on reload); keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const seq = useRef(0);
  useEffect(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => mine === seq.current && setState({ data, loading: false }),
      (error) => mine === seq.current && setState({ error, loading: false }),
    );
    // Not `load` itself: callers pass a new closure on every render; `deps` names what it reads.
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export function errorText(err: unknown, t: ReturnType<typeof useI18n>['t']): string {
  if (err instanceof ApiError) {
    if (err.status === 0) return t('networkError');
    if (err.status === 404) return `${t('notFound')} ${err.message}`;
    return `${err.message} (${err.code})`;
  }
  return String(err);
}

export function Loading() {
  const { t } = useI18n();
  return (
    <p class="loading" role="status">
      {t('loading')}
    </p>
  );
}

export function ErrorBox({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { t } = useI18n();
  return (
    <div class="error-box" role="alert">
      <p class="error-title">{t('errorTitle')}</p>
      <p>{errorText(error, t)}</p>
      {onRetry && (
        <button type="button" class="btn" onClick={onRetry}>
          {t('retry')}
        </button>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** Renders the loading/error states of a Loaded, or the children with the data. */
export function Show<T>({ value, children }: { value: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (value.data === undefined && value.error) return <ErrorBox error={value.error} onRetry={value.reload} />;
  if (value.data === undefined) return <Loading />;
  return (
    <>
      {value.error ? <ErrorBox error={value.error} onRetry={value.reload} /> : null}
      {children(value.data)}
    </>
  );
}

const STATE_MARK: Record<AssetState, string> = { free: '○', booked: '●', 'checked-in': '✓', cleaning: '◐', closed: '✕' };

export function StateBadge({ state }: { state: AssetState }) {
  const { t } = useI18n();
  return (
    <span class={`badge state-${state}`}>
      <span aria-hidden="true">{STATE_MARK[state]} </span>
      <span class="badge-text">{label(t, 'state_', state)}</span>
    </span>
  );
}

export function StatusBadge({ status, kind = 'status_' }: { status: string; kind?: 'status_' | 'invite_' }) {
  const { t } = useI18n();
  return <span class={`badge status-${status}`}>{label(t, kind, status)}</span>;
}

/** Announces the outcome of an action (polite live region). */
export function Notice({ text, error }: { text?: string | null; error?: unknown }) {
  const { t } = useI18n();
  return (
    <div class="notice-area" aria-live="polite">
      {text ? <p class="notice ok">{text}</p> : null}
      {error ? (
        <p class="notice bad" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
    </div>
  );
}

/** An action that runs a promise and reports its result; the button is disabled while it runs. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  // Returns nothing: every outcome lands in the state, so event handlers may call it directly.
  const run = <R,>(fn: () => Promise<R>, okText: string | ((result: R) => string), after?: () => void): void => {
    void perform(fn, okText, after);
  };
  const perform = async <R,>(fn: () => Promise<R>, okText: string | ((result: R) => string), after?: () => void) => {
    setBusy(true);
    setDone(null);
    setError(null);
    try {
      const result = await fn();
      setDone(typeof okText === 'function' ? okText(result) : okText);
      after?.();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return { busy, done, error, run };
}

/** One `<option>` per project, named: the project pickers of the floor plan, bookings and visitors screens. */
export function ProjectOptions({ projects }: { projects: readonly { _id: string; name: string }[] }) {
  return (
    <>
      {projects.map((p) => (
        <option key={p._id} value={p._id}>
          {p.name}
        </option>
      ))}
    </>
  );
}

/** One column of a DataTable: its header (also each cell's data-label, the caption a phone shows), its cell, and the cell's class. */
export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
  class?: (row: T) => string | undefined;
}

/**
 * The console's table: a `table.cards-on-phone` (rows become labelled cards on a phone), or the
 * empty state when there are no rows. The screens' lists (bookings, listeners, deliveries,
 * devices, visitors, payments, a booking's history) all render through it.
 */
export function DataTable<T>({
  columns,
  rows,
  rowKey,
  rowClass,
  empty,
}: {
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowKey: (row: T, index: number) => string | number;
  rowClass?: (row: T) => string | undefined;
  empty: ComponentChildren;
}) {
  if (rows.length === 0) return <Empty>{empty}</Empty>;
  return (
    <table class="table cards-on-phone">
      <thead>
        <tr>
          {columns.map((c, i) => (
            <th key={i} scope="col">
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row, r) => (
          <tr key={rowKey(row, r)} class={rowClass?.(row)}>
            {columns.map((c, i) => (
              <td key={i} data-label={c.header} class={c.class?.(row)}>
                {c.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
