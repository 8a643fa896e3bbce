/**
 * Load shedding (@fastify/under-pressure): while the event loop's delay, sampled every
 * `sampleIntervalMs`, is above `maxEventLoopDelayMs` (MAX_EVENT_LOOP_DELAY_MS; 0: off),
 * new requests are answered 503 KS004 with Retry-After through the one error mapping
 * instead of queuing without end. /healthz (the process is alive) and /metrics (the
 * operator must see the pressure) are exempt; /readyz is not, so a load balancer takes a
 * shedding instance out of rotation until it catches up.
 */
import underPressure from '@fastify/under-pressure';
import type { FastifyRequest } from 'fastify';
import type { App } from './types.js';
import type { Config } from '../config.js';
import { ServiceError } from '../errors.js';
import { METRICS_PATH } from './metrics-route.js';

/** Routes answered even while shedding. */
export const SHEDDING_EXEMPT = new Set(['/healthz', METRICS_PATH]);
/** Retry-After of a shed request (seconds). */
export const SHED_RETRY_AFTER_S = 5;

export async function registerLoadShedding(app: App, config: Config['loadShedding']): Promise<void> {
  if (config.maxEventLoopDelayMs <= 0) return;
  await app.register(underPressure, {
    maxEventLoopDelay: config.maxEventLoopDelayMs,
    sampleInterval: config.sampleIntervalMs,
    retryAfter: SHED_RETRY_AFTER_S,
    // Resolving lets the request through; rejecting sends the error through the error mapping (the envelope).
    pressureHandler: async (req: FastifyRequest) => {
      if (SHEDDING_EXEMPT.has(req.routeOptions.url ?? '')) return;
      throw new ServiceError(503, 'KS004', 'The service is overloaded; retry after the Retry-After seconds', undefined, SHED_RETRY_AFTER_S);
    },
  });
}
