/** Sandbox clock: GET/POST /ops/v1/clock (development and uat only; 404 in production). */
import type { App } from '../../platform/http/types.js';
import type { Services } from '../../services.js';
import { ok } from '../../platform/http/envelope.js';
import { Envelope, ErrorEnvelope } from '../../contract/envelope.js';
import { ClockMove, ClockState } from '../../contract/ops.js';
import { errors } from '../../platform/errors.js';

const ClockResponse = Envelope(ClockState);

export async function opsClockRoutes(app: App, services: Services): Promise<void> {
  const sandbox = services.sandboxClock;
  const requireSandbox = async () => {
    if (!sandbox.enabled) throw errors.notFound('The sandbox clock exists only in development and uat');
  };

  app.get('/ops/v1/clock', {
    onRequest: requireSandbox,
    schema: { tags: ['ops'], summary: 'Read the sandbox clock', security: [{ opsToken: [] }], response: { 200: ClockResponse, 404: ErrorEnvelope } },
  }, async () => {
    await sandbox.refresh();
    return ok(sandbox.state());
  });

  app.post('/ops/v1/clock', {
    onRequest: requireSandbox,
    schema: {
      tags: ['ops'],
      summary: 'Move the sandbox clock forward; everything due by then has happened when this answers',
      security: [{ opsToken: [] }],
      body: ClockMove,
      response: { 200: ClockResponse, 400: ErrorEnvelope, 404: ErrorEnvelope },
    },
  }, async (req) => {
    const { advanceMinutes, set } = req.body;
    if ((advanceMinutes === undefined) === (set === undefined)) {
      throw errors.validation(['body must contain exactly one of advanceMinutes or set']);
    }
    // advanceMinutes counts from the service time when the (serialized) move runs, so a queued
    // concurrent advance is neither shortened nor refused as "earlier than now".
    if (set !== undefined) return ok(await sandbox.advanceTo(Date.parse(set)));
    return ok(await sandbox.advanceBy(Math.round(advanceMinutes! * 60_000)));
  });
}
