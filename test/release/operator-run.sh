#!/usr/bin/env bash
# The release as an operator runs it: as the unprivileged system user `booking`,
# from a root-owned tree that user cannot write, writing only to its data directory.
#
# Run as root after `npm run release -- "$RELEASE_DIR"`:
#   RELEASE_DIR=/path/to/release bash test/release/operator-run.sh
# It checks, on SQLite in production mode:
#   1. `node dist/main.js` (started from /) serves /healthz, /readyz, /openapi.json and
#      /console; a tiny site applies through /ops/v1/apply and its app takes a token;
#   2. nothing in the tree changed, and the user wrote nothing outside the data dir
#      (in the places one can look: /tmp, /var/tmp, /dev/shm, the tree);
#   3. `npm start` from the tree: SIGTERM to npm's process ends node within
#      SHUTDOWN_TIMEOUT_MS, npm exits 0, no node is left behind.
# Fails loudly (with the service's log) on the first problem.
set -euo pipefail

: "${RELEASE_DIR:?set RELEASE_DIR to a tree built by npm run release}"
RELEASE_DIR=$(cd "$RELEASE_DIR" && pwd)
[ "$(id -u)" = 0 ] || { echo "operator-run: must run as root (creates a user, chowns the tree)" >&2; exit 1; }
[ -f "$RELEASE_DIR/dist/main.js" ] || { echo "operator-run: $RELEASE_DIR/dist/main.js missing" >&2; exit 1; }

RUN_USER=booking
SHUTDOWN_TIMEOUT_MS=5000
work=$(mktemp -d)
chmod 0755 "$work"
data="$work/data"
logs="$work/logs"
mkdir -p "$data" "$logs"
pids=()

fail() {
  echo "operator-run: FAIL: $*" >&2
  for f in "$logs"/*.log; do [ -f "$f" ] && { echo "----- $f" >&2; tail -n 60 "$f" >&2; }; done
  exit 1
}
kill_tree() { # pid: the process and every descendant (an npm start that failed to exec node)
  local c
  for c in $(pgrep -P "$1" || true); do kill_tree "$c"; done
  kill -KILL "$1" 2>/dev/null || true
}
cleanup() {
  for p in "${pids[@]}"; do kill_tree "$p"; done
  rm -rf "$work"
}
trap cleanup EXIT

echo "=== operator-run: user $RUN_USER, read-only tree $RELEASE_DIR"
id -u "$RUN_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$RUN_USER"
chown -R root:root "$RELEASE_DIR"
chmod -R a+rX,go-w "$RELEASE_DIR"
chown "$RUN_USER:$RUN_USER" "$data"
chmod 0700 "$data"

# user_cmd DIR: sets U to the command prefix that runs, as $RUN_USER in DIR, with a clean
# environment holding only what the service is given here (HOME is the data dir, so npm's
# own cache and logs, if it writes any, land there too). Run "${U[@]}" cmd… directly
# (not through a function or subshell) so that $! is the service's own process.
user_cmd() {
  U=(setpriv --reuid="$RUN_USER" --regid="$RUN_USER" --init-groups
    env -i -C "$1" PATH="$PATH" HOME="$data" LANG=C.UTF-8
    BOOKING_ENV=production OPS_TOKEN="$OPS_TOKEN" SECRETS_KEY="$SECRETS_KEY"
    DATABASE_URL="$data/booking.sqlite" HOST=127.0.0.1 PORT="$PORT"
    SHUTDOWN_TIMEOUT_MS="$SHUTDOWN_TIMEOUT_MS" npm_config_update_notifier=false)
}

as_user_probe() { setpriv --reuid="$RUN_USER" --regid="$RUN_USER" --init-groups "$@"; }
as_user_probe test -r "$RELEASE_DIR/dist/main.js" ||
  fail "$RUN_USER cannot read $RELEASE_DIR/dist/main.js (is a parent directory 0700?)"
as_user_probe touch "$RELEASE_DIR/.write-probe" 2>/dev/null && fail "$RUN_USER can write to the tree $RELEASE_DIR"
as_user_probe touch "$RELEASE_DIR/dist/.write-probe" 2>/dev/null && fail "$RUN_USER can write to $RELEASE_DIR/dist"
[ ! -e "$RELEASE_DIR/node_modules/typescript" ] || fail "the release holds TypeScript"
[ ! -e "$RELEASE_DIR/src" ] || fail "the release holds sources"

OPS_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
SECRETS_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

wait_ready() { # pid log
  for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && return 0
    kill -0 "$1" 2>/dev/null || fail "the service exited before it was ready (see $2)"
    sleep 0.25
  done
  fail "not ready within 30 s"
}

expect_status() { # status path [curl args…]
  local want=$1 path=$2 got
  shift 2
  got=$(curl -s -o "$work/body" -w '%{http_code}' "$@" "http://127.0.0.1:$PORT$path")
  [ "$got" = "$want" ] || fail "$path answered $got, expected $want: $(head -c 400 "$work/body")"
  echo "  $path -> $got"
}

touch "$work/marker"
sleep 1

echo "=== node dist/main.js as $RUN_USER, from /, BOOKING_ENV=production"
PORT=$(free_port)
user_cmd /
"${U[@]}" node "$RELEASE_DIR/dist/main.js" >"$logs/node.log" 2>&1 &
node_pid=$!
pids+=("$node_pid")
wait_ready "$node_pid" "$logs/node.log"
expect_status 200 /healthz
expect_status 200 /readyz
expect_status 200 /openapi.json
expect_status 200 /console/
site='{"brands":[{"key":"rel-brand","name":"Release Check"}],
"projects":[{"key":"rel-project","brand":"rel-brand","name":"Release HQ","timezone":"Europe/London","currency":"GBP"}],
"apps":[{"key":"rel-app","appId":"release-check-app","appSecret":"release-check-app-secret-0123456789abcdef",
"name":"Release check","projects":["rel-project"]}]}'
expect_status 401 /ops/v1/apply -X POST -H 'content-type: application/json' -d "$site"
expect_status 200 /ops/v1/apply -X POST -H 'content-type: application/json' -H "authorization: Bearer $OPS_TOKEN" -d "$site"
expect_status 201 /auth/accessToken -X POST -H 'content-type: application/json' \
  -d '{"grant_type":"app_credentials","app_id":"release-check-app","app_secret":"release-check-app-secret-0123456789abcdef"}'
grep -q '"access_token"\|"accessToken"' "$work/body" || fail "no token in $(head -c 300 "$work/body")"
kill -TERM "$node_pid"
rc=0
wait "$node_pid" || rc=$?
[ "$rc" = 0 ] || fail "node dist/main.js exited $rc on SIGTERM"
grep -q '"msg":"stopped"' "$logs/node.log" || fail "node dist/main.js did not shut down gracefully"
[ -s "$data/booking.sqlite" ] || fail "no database in the data dir"
[ "$(stat -c %U "$data/booking.sqlite")" = "$RUN_USER" ] || fail "the database is not owned by $RUN_USER"

echo "=== npm start as $RUN_USER from the tree; SIGTERM to npm"
PORT=$(free_port)
user_cmd "$RELEASE_DIR"
"${U[@]}" npm start >"$logs/npm-start.log" 2>&1 &
npm_pid=$!
pids+=("$npm_pid")
wait_ready "$npm_pid" "$logs/npm-start.log"
child=$(pgrep -P "$npm_pid" || true)
[ -n "$child" ] || fail "npm start has no child process"
pids+=("$child")
grep -q 'node' "/proc/$child/comm" || fail "npm start's child is $(cat "/proc/$child/comm"), not node (start must exec node)"
expect_status 200 /healthz
kill -TERM "$npm_pid"
started=$(date +%s%N)
limit=$((SHUTDOWN_TIMEOUT_MS * 1000000 + 2000000000))
while kill -0 "$child" 2>/dev/null || kill -0 "$npm_pid" 2>/dev/null; do
  [ $(($(date +%s%N) - started)) -lt "$limit" ] || fail "node ($child) or npm ($npm_pid) still running after SIGTERM"
  sleep 0.1
done
rc=0
wait "$npm_pid" || rc=$?
[ "$rc" = 0 ] || fail "npm start exited $rc after SIGTERM"
grep -q '"msg":"stopped"' "$logs/npm-start.log" || fail "node did not shut down gracefully"
echo "  stopped in $((($(date +%s%N) - started) / 1000000)) ms, exit 0"

echo "=== node dist/main.js --migrate-only (a release job): migrates a fresh database and exits, serves nothing"
user_cmd /
"${U[@]}" DATABASE_URL="$data/fresh.sqlite" node "$RELEASE_DIR/dist/main.js" --migrate-only >"$logs/migrate.log" 2>&1 ||
  fail "--migrate-only exited $? on a fresh database: $(cat "$logs/migrate.log")"
grep -q '"msg":"migrations applied"' "$logs/migrate.log" || fail "--migrate-only applied nothing: $(cat "$logs/migrate.log")"
grep -q 'listening on' "$logs/migrate.log" && fail "--migrate-only started serving"
"${U[@]}" DATABASE_URL="$data/fresh.sqlite" node "$RELEASE_DIR/dist/main.js" --migrate-only >"$logs/migrate-again.log" 2>&1 ||
  fail "--migrate-only exited $? on a migrated database"
grep -q '"msg":"migrations applied"' "$logs/migrate-again.log" && fail "--migrate-only applied migrations twice"
rm -f "$data"/fresh.sqlite*
echo "  migrated a fresh database, then found nothing to do"

echo "=== nothing written outside the data dir"
changed=$(find "$RELEASE_DIR" -newer "$work/marker" -print | head -n 20)
[ -z "$changed" ] || fail "the tree changed: $changed"
stray=$(find /tmp /var/tmp /dev/shm "$RELEASE_DIR" -xdev -user "$RUN_USER" -newer "$work/marker" -not -path "$data" -not -path "$data/*" -print 2>/dev/null | head -n 20)
[ -z "$stray" ] || fail "$RUN_USER wrote outside its data dir: $stray"
echo "  data dir holds: $(cd "$data" && find . -mindepth 1 -maxdepth 2 | sort | tr '\n' ' ')"
echo "operator-run: OK"
