/**
 * The console's live changes: one poller per instance, shared by every open
 * stream (GET /ops/v1/stream), reading durable change cursors from the database so
 * a change made on ANY instance over the same database reaches every console.
 *
 * Each source reports rows whose change time (`at`, a stored updated_at-like column)
 * is after a cursor. A row committed late with an earlier `at` is still seen: each
 * poll re-reads an overlap window behind the cursor and skips what it already sent.
 * The poller runs only while someone listens, about once a second.
 */
import type { StreamChange } from '../../contract/ops-console.js';

export interface ChangeRow {
  id: string;
  projectId: string | null;
  at: number;
}

export interface ChangeSource {
  kind: StreamChange['kind'];
  /** Rows changed after `after`, oldest first, at most `limit`. */
  changedSince(after: number, limit: number): Promise<ChangeRow[]>;
  /** The latest change time now (where a new listener starts). */
  latest(): Promise<number>;
}

export interface ChangeFeedOptions {
  sources: ChangeSource[];
  /** A value that changes when the sandbox clock moves (its offset); a change is sent as kind `clock`. */
  clockMark?: () => number;
  intervalMs?: number;
  /** How far behind the cursor each poll looks again (late commits). */
  overlapMs?: number;
  onError?: (err: unknown) => void;
}

type Listener = (c: StreamChange) => void;

const BATCH = 500;

export class ChangeFeed {
  private readonly listeners = new Set<Listener>();
  private readonly cursors = new Map<ChangeSource, number>();
  private readonly seen = new Map<ChangeSource, Map<string, number>>();
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private primed: Promise<void> | null = null;
  private clockMark: number | null = null;
  private stopped = false;

  constructor(private readonly o: ChangeFeedOptions) {}

  /** Starts listening; returns the unsubscribe. The poller runs while anyone listens. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    if (!this.timer && !this.stopped) this.start();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.halt();
    };
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** Stops polling for good (shutdown); waits for a poll in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.listeners.clear();
    this.halt();
    await this.polling?.catch(() => {});
  }

  private start(): void {
    this.primed = this.prime();
    this.timer = setInterval(() => {
      if (!this.polling) this.polling = this.poll().finally(() => (this.polling = null));
    }, this.o.intervalMs ?? 1000);
    this.timer.unref();
  }

  private halt(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async prime(): Promise<void> {
    this.clockMark = this.o.clockMark?.() ?? null;
    for (const s of this.o.sources) {
      try {
        this.cursors.set(s, await s.latest());
      } catch (err) {
        this.o.onError?.(err);
        this.cursors.set(s, 0);
      }
      this.seen.set(s, new Map());
    }
  }

  private emit(c: StreamChange): void {
    for (const l of [...this.listeners]) {
      try {
        l(c);
      } catch (err) {
        this.o.onError?.(err);
      }
    }
  }

  private async poll(): Promise<void> {
    await this.primed;
    if (this.o.clockMark) {
      const mark = this.o.clockMark();
      if (mark !== this.clockMark) {
        this.clockMark = mark;
        this.emit({ kind: 'clock', id: 'clock', projectId: null });
      }
    }
    const overlap = this.o.overlapMs ?? 5_000;
    for (const s of this.o.sources) {
      if (!this.timer) return;
      try {
        const cursor = this.cursors.get(s) ?? 0;
        const seen = this.seen.get(s)!;
        const rows = await s.changedSince(cursor - overlap, BATCH);
        let max = cursor;
        for (const r of rows) {
          const key = `${r.id}@${r.at}`;
          if (seen.has(key)) continue;
          seen.set(key, r.at);
          if (r.at > max) max = r.at;
          this.emit({ kind: s.kind, id: r.id, projectId: r.projectId });
        }
        this.cursors.set(s, max);
        for (const [key, at] of seen) if (at < max - overlap) seen.delete(key);
      } catch (err) {
        this.o.onError?.(err);
      }
    }
  }
}
