/**
 * Which failures mean "the database cannot serve us right now" (retryable: 503
 * with Retry-After) rather than "this statement is wrong" (a bug: 500). One
 * classification for the HTTP error mapping and the SQLite busy retry.
 *
 * PostgreSQL, by SQLSTATE (`code`):
 * - class 08 (connection exception), 57P01–57P03 (admin/crash shutdown, cannot
 *   connect now), 53300 (too many connections, for the server or the role);
 * - 55000 (object_not_in_prerequisite_state) only with the message
 *   `database "…" is not currently accepting connections` (ALTER DATABASE …
 *   ALLOW_CONNECTIONS false). PostgreSQL raises 55000 for other reasons too
 *   (e.g. a sequence's currval not yet defined, a replication slot in use),
 *   which are faults of the statement and stay 500.
 * The driver (pg, pg-pool, Node's net): connection refused, reset, timed out or
 * a broken pipe, a connection terminated, a client no longer queryable, a pool
 * timing out waiting for a connection.
 * SQLite: SQLITE_BUSY (another connection holds the write lock).
 *
 * Wrapped errors count by what they wrap: `cause` and an AggregateError's
 * `errors` (Node reports a refused connection to a host with several addresses
 * as an AggregateError whose `code` is ECONNREFUSED and whose message is empty).
 */

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[1-3]|53300)$/;
const NOT_ACCEPTING_CONNECTIONS = /is not currently accepting connections/i;
const UNAVAILABLE_ERRNO = /^(ECONNREFUSED|ECONNRESET|ECONNABORTED|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|SQLITE_BUSY(_[A-Z]+)?)$/;
const UNAVAILABLE_MESSAGE =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Connection terminated|not queryable|timeout exceeded when trying to connect|database is locked|too many clients|too many connections|the database system is (starting up|shutting down|in recovery mode)|terminating connection|is not currently accepting connections/i;
/** The disk is full (SQLITE_FULL): nothing was written; retryable once an operator frees space. */
const FULL = /SQLITE_FULL|database or disk is full/i;

/** Applies `test` to the error and to what it wraps (`cause`, AggregateError `errors`), a few levels deep. */
function some(err: unknown, test: (e: ErrorLike) => boolean, depth = 0): boolean {
  if (depth > 4 || err === null || typeof err !== 'object') return false;
  const e = err as ErrorLike;
  if (test(e)) return true;
  if (e.cause !== undefined && some(e.cause, test, depth + 1)) return true;
  return Array.isArray(e.errors) && e.errors.slice(0, 8).some((inner) => some(inner, test, depth + 1));
}

const text = (v: unknown) => (typeof v === 'string' ? v : '');

/** The database is unreachable, refusing connections, shutting down or (SQLite) locked by another writer. */
export function isDatabaseUnavailable(err: unknown): boolean {
  return some(err, (e) => {
    const code = text(e.code);
    if (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.test(code)) return true;
    if (code === '55000') return NOT_ACCEPTING_CONNECTIONS.test(text(e.message));
    // A SQLSTATE other than those above names what happened: its message is not second-guessed.
    if (/^[0-9A-Z]{5}$/.test(code) && /\d/.test(code)) return false;
    return UNAVAILABLE_MESSAGE.test(text(e.message));
  });
}

/** SQLite's write lock is held by another connection (SQLITE_BUSY). */
export function isDatabaseBusy(err: unknown): boolean {
  return some(err, (e) => /^SQLITE_BUSY(_[A-Z]+)?$/.test(text(e.code)) || /database is locked/i.test(text(e.message)));
}

/** The database has no room to write (SQLITE_FULL). */
export function isDatabaseFull(err: unknown): boolean {
  return some(err, (e) => FULL.test(text(e.code)) || FULL.test(text(e.message)));
}
