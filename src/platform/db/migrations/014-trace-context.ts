/**
 * 014: `trace_parent` on `deliveries` and `timers`, the W3C trace context
 * (`traceparent`) of the request that queued the delivery or scheduled the timer,
 * so the background job that handles it later joins and links that request's trace
 * (platform/observability/tracing.ts). Additive and nullable: rows written before,
 * or with tracing off, have none, and a previous version ignores the column.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('deliveries').addColumn('trace_parent', 'text').execute();
  await db.schema.alterTable('timers').addColumn('trace_parent', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('timers').dropColumn('trace_parent').execute();
  await db.schema.alterTable('deliveries').dropColumn('trace_parent').execute();
}
