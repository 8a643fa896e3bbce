/**
 * The sandbox clock of development and uat (operator surface, ops token): read
 * it and move it forward. For tests and examples only; production has no
 * sandbox clock and an integrator's app never holds the ops token.
 */
import { enveloped, Transport, type TransportOptions } from './transport.js';

export class SandboxClock {
  private readonly transport: Transport;
  private readonly auth;

  constructor(o: TransportOptions & { opsToken: string }) {
    this.transport = new Transport(o);
    const token = o.opsToken;
    this.auth = { token: async () => token, invalidate: () => {} };
  }

  /** GET /ops/v1/clock: the service's now (epoch ms). */
  async now(): Promise<number> {
    const a = await this.transport.call({ method: 'GET', path: '/ops/v1/clock', auth: this.auth });
    return Date.parse(enveloped<{ now: string }>(a).data.now);
  }

  /** POST /ops/v1/clock {advanceMinutes}: everything that falls due is applied before it answers. */
  async advance(minutes: number): Promise<number> {
    const a = await this.transport.call({ method: 'POST', path: '/ops/v1/clock', body: { advanceMinutes: minutes }, auth: this.auth });
    return Date.parse(enveloped<{ now: string }>(a).data.now);
  }

  /** POST /ops/v1/clock {set} (never earlier than now). */
  async set(at: Date | string): Promise<number> {
    const a = await this.transport.call({
      method: 'POST',
      path: '/ops/v1/clock',
      body: { set: typeof at === 'string' ? at : at.toISOString() },
      auth: this.auth,
    });
    return Date.parse(enveloped<{ now: string }>(a).data.now);
  }
}
