/**
 * The one source of "now". Domain code receives a Clock and never reads Date.now().
 * Instants are epoch milliseconds (UTC).
 */
export interface Clock {
  now(): number;
}

/** Wall-clock time of the machine. */
export const systemClock: Clock = { now: () => Date.now() };

/**
 * Service time: the machine's clock plus a forward-only sandbox offset
 * (always 0 in production). The offset is persisted by the clock service.
 */
export class OffsetClock implements Clock {
  private offset = 0;
  constructor(private readonly base: Clock = systemClock) {}
  now(): number {
    return this.base.now() + this.offset;
  }
  get offsetMs(): number {
    return this.offset;
  }
  setOffset(offsetMs: number): void {
    this.offset = offsetMs;
  }
}

/** A clock a test moves by hand. */
export class ManualClock implements Clock {
  constructor(private t: number) {}
  now(): number {
    return this.t;
  }
  set(t: number): void {
    this.t = t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}
