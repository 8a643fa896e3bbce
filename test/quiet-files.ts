/**
 * Test files that measure how long the service keeps its event loop busy (a /healthz
 * prober beside heavy work). On a small machine their figures are only meaningful when
 * no other test file runs beside them, so `npm test` runs them after the rest, one at a
 * time (scripts/test.sh, vitest.config.ts). A path here is still an ordinary test file:
 * `npx vitest run <file>` runs it alone.
 */
export const QUIET_FILES = ['test/http/scale-large-site.test.ts', 'test/http/fault-sqlite-busy.test.ts'];
