#!/usr/bin/env bash
# `npm test`: every test file, in two phases. First all files but the quiet ones
# (test/quiet-files.ts), in parallel; then the quiet ones alone, one after another,
# so their latency figures are the service's, not the other test files'. Both phases
# always run; the exit status is non-zero when either failed.
# With arguments (a file filter, vitest flags) it is one plain `vitest run` with them.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then exec npx vitest run "$@"; fi
status=0
TEST_PHASE=parallel npx vitest run || status=1
echo "=== quiet phase: the latency tests of test/quiet-files.ts, one file at a time"
TEST_PHASE=quiet npx vitest run || status=1
exit $status
