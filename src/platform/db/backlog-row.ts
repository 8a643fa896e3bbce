/** The row shape of a job's backlog count in a repository (`count(*) as n, min(due column) as oldest`). */

/** A job's backlog (platform/jobs' `Backlog`) from a `count(*) as n, min(due column) as oldest` row (drivers may give either as text). */
export function backlogOf(row: { n: unknown; oldest: unknown }): { count: number; oldestDueAt: number | null } {
  return { count: Number(row.n), oldestDueAt: row.oldest === null || row.oldest === undefined ? null : Number(row.oldest) };
}
