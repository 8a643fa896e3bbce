/**
 * Child side of the bench IPC protocol (see children.ts): `ready(payload)` once
 * listening, handlers answer `{type, id, ...}` messages, `cpu` answers
 * `process.cpuUsage()`, `stop` runs the child's shutdown and exits. A child whose
 * parent disappears (IPC channel closed) shuts down too, so nothing outlives a
 * crashed bench.
 */
export type Handler = (msg: Record<string, any>) => unknown;

export function serve(handlers: Record<string, Handler>, shutdown: () => Promise<void>): { ready(payload: Record<string, unknown>): void } {
  if (!process.send) throw new Error('this bench process must be started by a bench script (it needs an IPC channel)');
  const send = (m: unknown) => {
    if (process.connected) process.send!(m);
  };
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => process.exit(code || 1), 10_000);
    force.unref();
    try {
      await shutdown();
    } catch (err) {
      console.error(err);
      code = code || 1;
    }
    // process.exit (not a signal) so that --cpu-prof writes its profile.
    process.exit(code);
  };
  process.on('message', (raw) => {
    const msg = raw as Record<string, any> & { type: string; id: number };
    if (msg.type === 'stop') return void stop(0);
    // With the monotonic clock in µs, the clock of V8's CPU profiles (to cut a profile to the measured runs).
    if (msg.type === 'cpu')
      return send({ id: msg.id, ok: true, result: { ...process.cpuUsage(), monoUs: Number(process.hrtime.bigint() / 1000n) } });
    const h = handlers[msg.type];
    if (!h) return send({ id: msg.id, ok: false, error: `unknown request ${msg.type}` });
    Promise.resolve()
      .then(() => h(msg))
      .then(
        (result) => send({ id: msg.id, ok: true, result }),
        (err: unknown) => send({ id: msg.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
      );
  });
  process.on('disconnect', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGINT', () => void stop(0));
  return { ready: (payload) => send({ type: 'ready', payload }) };
}

/** Reports a start-up failure to the parent and exits. */
export function failed(err: unknown): void {
  const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
  console.error(error);
  if (process.connected) process.send!({ type: 'failed', error }, () => process.exit(1));
  else process.exit(1);
}
