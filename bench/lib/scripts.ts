/**
 * Scripts a bench starts as plain child processes (the service with `src/main.ts`, a gateway, terminal
 * stand-ins): started under tsx, ready once their stdout matches a pattern, stopped with SIGTERM. With
 * BENCH_PROFILE_DIR set, the service writes a CPU profile there.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** Starts `node --import tsx ...args` and resolves once its stdout matches `ready` (60 s at most). */
export function startScript(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const profile =
    process.env.BENCH_PROFILE_DIR && args[0] === 'src/main.ts' ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start: ${out}`)), 60_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = out.match(ready);
      if (m) {
        clearTimeout(timer);
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        resolve({ child, match: m });
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${out}`)));
  });
}

/** Stops a child started by startScript (SIGTERM) and resolves once it exited. */
export function stopScript(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
