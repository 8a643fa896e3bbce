/**
 * Importing `urllib` loads undici 7, which installs its own Agent as the process-wide fetch dispatcher when
 * none is set yet; Node's built-in fetch would then run on it (and refuse, for instance, a hand-set
 * content-length that Node's own undici accepts). This module is imported just before `urllib` (ES modules
 * evaluate in import order) and makes Node's built-in fetch install its own dispatcher first, by fetching a
 * `data:` URL (no network). undici 7 then leaves the global dispatcher alone; the ISAPI client passes its
 * own Agent to every request.
 */
const KEY = Symbol.for('undici.globalDispatcher.1');

if ((globalThis as unknown as Record<symbol, unknown>)[KEY] === undefined) void fetch('data:,').catch(() => undefined);
