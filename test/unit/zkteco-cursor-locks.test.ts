/**
 * CursorLocks (devices/vendors/zkteco-cursor.ts): changes of one device's cursor run one at a time, in
 * arrival order; other devices' do not wait; a change that fails does not hold up the next.
 */
import { describe, expect, it } from 'vitest';
import { CursorLocks } from '../../src/modules/devices/vendors/zkteco-cursor.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('CursorLocks', () => {
  it('runs the changes of one device one after another, in arrival order', async () => {
    const locks = new CursorLocks();
    const log: string[] = [];
    const step = (name: string) =>
      locks.run('d1', async () => {
        log.push(`${name} reads`);
        await tick();
        await tick();
        log.push(`${name} writes`);
        return name;
      });
    expect(await Promise.all([step('a'), step('b'), step('c')])).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['a reads', 'a writes', 'b reads', 'b writes', 'c reads', 'c writes']);
  });

  it("another device's change does not wait", async () => {
    const locks = new CursorLocks();
    let release!: () => void;
    const held = locks.run('d1', () => new Promise<void>((r) => (release = r)));
    await tick();
    expect(await locks.run('d2', async () => 'free')).toBe('free');
    release();
    await held;
  });

  it('a failed change rejects its caller and the next one still runs', async () => {
    const locks = new CursorLocks();
    const failed = locks.run('d1', async () => {
      await tick();
      throw new Error('boom');
    });
    const next = locks.run('d1', async () => 'ran');
    await expect(failed).rejects.toThrow('boom');
    expect(await next).toBe('ran');
  });
});
