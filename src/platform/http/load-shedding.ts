/**
 * Load shedding (@fastify/under-pressure): while the event loop's delay, sampled every
 * `sampleIntervalMs`, is above `maxEventLoopDelayMs` (MAX_EVENT_LOOP_DELAY_MS; 0: off),
 * new requests are answered 503 KS004 with Retry-After through the one error mapping
 * instead of queuing without end. /healthz (the process is alive) and /metrics (the
 * operator must see the pressure) are exempt; /readyz is not, so a load balancer takes a
 * shedding instance out of rotation until it catches up.
 */
import underPressure from '@fastify/under-pressure';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from './types.js';
import type { Config } from '../config.js';
import { ServiceError } from '../errors.js';
import { METRICS_PATH } from './metrics-route.js';
import { toErrorResponse } from './error-mapping.js';

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
    // Exempt routes go on (undefined); others are answered here, through the one mapping (the envelope and Retry-After),
    // and not through the error handler: a shed request is expected under overload and is not logged as a failure.
    // (under-pressure sends a returned value as the answer; its types say void.)
    pressureHandler: (req: FastifyRequest, reply: FastifyReply): void => {
      if (SHEDDING_EXEMPT.has(req.routeOptions.url ?? '')) return undefined;
      const res = toErrorResponse(shedError());
      for (const [name, value] of Object.entries(res.headers ?? {})) void reply.header(name, value);
      void reply.status(res.status);
      return res.body as unknown as void;
    },
  });
}

function shedError(): ServiceError {
  return new ServiceError(503, 'KS004', 'The service is overloaded; retry after the Retry-After seconds', undefined, SHED_RETRY_AFTER_S);
}
