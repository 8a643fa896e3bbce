/** Sandbox clock: GET/POST /ops/v1/clock (development and uat only; 404 in production). */
import { Type } from 'typebox';
import type { App } from '../../platform/http/types.js';
import type { Services } from '../../services.js';
import { Envelope, ErrorEnvelope, ok } from '../../platform/http/envelope.js';
import { errors } from '../../platform/errors.js';

const ClockState = Envelope(
  Type.Object({
    now: Type.String({ format: 'date-time', description: 'Current service time' }),
    offsetMs: Type.Integer({ description: 'How far service time runs ahead of the machine clock' }),
  }),
);

const ClockMove = Type.Object(
  {
    advanceMinutes: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Move forward by this many minutes' })),
    set: Type.Optional(Type.String({ format: 'date-time', description: 'Move forward to this instant (never earlier than now)' })),
  },
  { additionalProperties: false, description: 'Exactly one of advanceMinutes or set' },
);

export async function opsClockRoutes(app: App, services: Services): Promise<void> {
  const sandbox = services.sandboxClock;
  const requireSandbox = async () => {
    if (!sandbox.enabled) throw errors.notFound('The sandbox clock exists only in development and uat');
  };

  app.get('/ops/v1/clock', {
    onRequest: requireSandbox,
    schema: { tags: ['ops'], summary: 'Read the sandbox clock', security: [{ opsToken: [] }], response: { 200: ClockState, 404: ErrorEnvelope } },
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
      response: { 200: ClockState, 400: ErrorEnvelope, 404: ErrorEnvelope },
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
