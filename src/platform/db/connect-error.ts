/**
 * Start-up failures caused by DATABASE_URL: the database cannot be reached or
 * refuses the connection (no user name, wrong password, no such database, nothing
 * listening). The message names the variable and shows the URL without its
 * password, so a newcomer knows what to change.
 */
import { isPostgresUrl } from '../config.js';

export class DatabaseUrlError extends Error {}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EACCES',
  'ENOENT',
  'EPERM',
  'EEXIST',
  'ENOTDIR',
  'EROFS',
]);

/** Whether `err` says the connection itself failed (not a statement): network, authentication, unknown database. */
export function isConnectFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return true;
    // PostgreSQL: 08 connection exception, 28 invalid authorization, 3D000 no such database.
    if (/^(08|28)[0-9A-Z]{3}$/.test(code) || code === '3D000') return true;
    // better-sqlite3: the file or its folder cannot be opened.
    if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_NOTADB' || code === 'SQLITE_PERM' || code === 'SQLITE_READONLY') return true;
  }
  // node-postgres' client-side refusals (a password the server asks for but the URL lacks, a connect timeout).
  return /user name specified|password|SASL|connection timeout|Connection terminated/i.test(err.message);
}

/** DATABASE_URL as it may be printed: any password replaced by `***`. */
export function redactDatabaseUrl(url: string): string {
  if (!isPostgresUrl(url)) return url;
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://… (not a valid URL)';
  }
}

export function databaseUrlError(url: string, cause: unknown, env: NodeJS.ProcessEnv = process.env): DatabaseUrlError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  const shown = redactDatabaseUrl(url);
  if (!isPostgresUrl(url)) {
    return new DatabaseUrlError(
      `cannot open the SQLite database DATABASE_URL names (${shown}): ${reason}. Set DATABASE_URL to a writable file path.`,
      { cause },
    );
  }
  let hint =
    'A complete DATABASE_URL names user, host, port and database: postgres://USER[:PASSWORD]@HOST:5432/DATABASE (e.g. postgres://postgres@127.0.0.1:5432/booking).';
  try {
    const u = new URL(url);
    if (!u.username && !env.PGUSER && !env.USER) hint = `DATABASE_URL names no user (and neither PGUSER nor USER is set). ${hint}`;
  } catch {
    // the driver's own reason says what is wrong with it
  }
  return new DatabaseUrlError(`cannot connect to the PostgreSQL database DATABASE_URL names (${shown}): ${reason}. ${hint}`, { cause });
}
