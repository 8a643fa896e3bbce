import { configDefaults, defineConfig } from 'vitest/config';
import { QUIET_FILES } from './test/quiet-files.js';

// TEST_PHASE (set by scripts/test.sh, which `npm test` runs): `parallel` runs every file but
// the quiet ones, in parallel; `quiet` runs only the quiet ones, one file at a time. Unset
// (a plain `npx vitest run …`), every file is eligible.
const phase = process.env.TEST_PHASE;

export default defineConfig({
  test: {
    include: phase === 'quiet' ? QUIET_FILES : ['test/**/*.test.ts'],
    exclude: phase === 'parallel' ? [...configDefaults.exclude, ...QUIET_FILES] : configDefaults.exclude,
    fileParallelism: phase !== 'quiet',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
