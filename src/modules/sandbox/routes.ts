/** Sandbox clock: GET/POST /ops/v1/clock (development and uat only; 404 in production). */
import type { App } from '../../platform/http/types.js';
import type { SandboxClock } from '../../platform/clock/sandbox-clock.js';
import { ok } from '../../platform/http/envelope.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { ClockMove, ClockState } from '../../contract/ops.js';
import { errors } from '../../platform/errors.js';
import { parseInstant } from '../../platform/time/instant.js';

const ClockResponse = Envelope(ClockState);

/** What the clock routes use. */
export interface SandboxRouteDeps {
  sandboxClock: SandboxClock;
}

export async function opsClockRoutes(app: App, deps: SandboxRouteDeps): Promise<void> {
  const sandbox = deps.sandboxClock;
  const requireSandbox = async () => {
    if (!sandbox.enabled) throw errors.notFound('The sandbox clock exists only in development and uat');
  };

  app.get(
    '/ops/v1/clock',
    {
      onRequest: requireSandbox,
      schema: {
        tags: ['ops'],
        summary: 'Read the sandbox clock',
        security: [{ opsToken: [] }],
        response: { 200: ClockResponse, 404: ErrorEnvelope },
      },
    },
    async () => {
      await sandbox.refresh();
      return ok(sandbox.state());
    },
  );

  app.post(
    '/ops/v1/clock',
    {
      onRequest: requireSandbox,
      schema: {
        tags: ['ops'],
        summary: 'Move the sandbox clock forward, or reset it; everything due by then has happened when this answers',
        description:
          'Exactly one of: `advanceMinutes` (more than 0, at most 52,596,000 = 100 years), `set` (an instant not earlier than ' +
          'the service time and at most 100 years ahead of the machine clock), or `reset: true`, which drops the offset back ' +
          'to 0 on every instance (the one backward move; nothing is replayed). Service time never runs more than 100 years ' +
          'ahead of the machine clock. The offset is stored in the database and survives restarts; a stored offset that is ' +
          'unreadable is taken as 0 and the next move or reset repairs it.',
        security: [{ opsToken: [] }],
        body: ClockMove,
        response: { 200: ClockResponse, 400: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (req) => {
      const { advanceMinutes, set, reset } = req.body;
      const given = [advanceMinutes, set, reset].filter((x) => x !== undefined).length;
      if (given !== 1) throw errors.validation(['body must contain exactly one of advanceMinutes, set or reset']);
      if (reset) return ok(await sandbox.reset());
      // A non-finite advanceMinutes (the validator coerces "1e999") never gets here: platform/http/finite-numbers.ts.
      // advanceMinutes counts from the service time when the (serialized) move runs, so a queued
      // concurrent advance is neither shortened nor refused as "earlier than now".
      if (set !== undefined) return ok(await sandbox.advanceTo(parseInstant(set, 'body.set')));
      return ok(await sandbox.advanceBy(Math.round(advanceMinutes! * 60_000)));
    },
  );
}
