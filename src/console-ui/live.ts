/** One EventSource on /ops/v1/stream for the whole console; screens subscribe to its change events. */
import { createContext } from 'preact';
import { useContext, useEffect, useRef } from 'preact/hooks';

export interface Change {
  kind: 'meeting' | 'delivery' | 'device' | 'visitor' | 'clock' | string;
  id?: string;
  projectId?: string;
}
type Listener = (c: Change) => void;

export class LiveFeed {
  private source: EventSource | null = null;
  private listeners = new Set<Listener>();
  private statusListeners = new Set<(connected: boolean) => void>();
  connected = false;

  start(): void {
    if (this.source) return;
    const es = new EventSource('/ops/v1/stream', { withCredentials: true });
    this.source = es;
    es.onopen = () => this.setConnected(true);
    es.onerror = () => this.setConnected(false);
    es.addEventListener('change', (ev) => {
      let change: Change;
      try {
        change = JSON.parse((ev as MessageEvent<string>).data) as Change;
      } catch {
        return;
      }
      for (const l of this.listeners) l(change);
    });
  }
  stop(): void {
    this.source?.close();
    this.source = null;
    this.setConnected(false);
  }
  subscribe(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  onStatus(l: (connected: boolean) => void): () => void {
    this.statusListeners.add(l);
    return () => this.statusListeners.delete(l);
  }
  private setConnected(v: boolean): void {
    if (this.connected === v) return;
    this.connected = v;
    for (const l of this.statusListeners) l(v);
  }
}

export const Live = createContext<LiveFeed | null>(null);

/** Calls `onChange` (debounced, so a burst of changes costs one re-fetch) for changes of the given kinds. */
export function useLiveChanges(kinds: readonly string[], onChange: () => void, delayMs = 250): void {
  const feed = useContext(Live);
  const cb = useRef(onChange);
  cb.current = onChange;
  useEffect(() => {
    if (!feed) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = feed.subscribe((c) => {
      if (!kinds.includes(c.kind)) return;
      clearTimeout(timer);
      timer = setTimeout(() => cb.current(), delayMs);
    });
    return () => {
      clearTimeout(timer);
      off();
    };
  }, [feed, kinds.join(',')]);
}
