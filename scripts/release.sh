#!/usr/bin/env bash
# Builds a release tree: `npm run release -- [DIR]` (default ./release).
#
# Compiles the service (npm run build), then assembles DIR with dist/, package.json,
# package-lock.json and LICENSE and installs the production dependencies into it
# (npm ci --omit=dev: no TypeScript, no sources; the package's prepare script sees
# no TypeScript there and skips the build). The result starts with
# `node DIR/dist/main.js` from any working directory, or `npm start` inside DIR.
# Every file is made readable (and every directory traversable) by all users, so
# an unprivileged service user can run a root-owned, read-only tree.
#
# DIR must be absent, empty, or an earlier release (it holds .booking-release);
# anything else is refused rather than overwritten.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=${1:-./release}
case "$dir" in /*) ;; *) dir="$root/${dir#./}" ;; esac

if [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ] && [ ! -f "$dir/.booking-release" ]; then
  echo "release: $dir exists, is not empty and is not an earlier release; refusing to overwrite it" >&2
  exit 1
fi

started=$(date +%s)
echo "release: building (npm run build)"
npm run -s build

echo "release: assembling $dir"
mkdir -p "$dir"
find "$dir" -mindepth 1 -delete
cp -R dist "$dir/dist"
rm -f "$dir/dist/.tsbuildinfo"
cp package.json package-lock.json LICENSE "$dir/"
version=$(node -p 'require("./package.json").version')
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
printf 'version=%s\ncommit=%s\nbuilt=%s\n' "$version" "$commit" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$dir/.booking-release"

echo "release: installing production dependencies (npm ci --omit=dev)"
(cd "$dir" && npm ci --omit=dev --no-audit --no-fund)

# Native addons compiled from source (no prebuilt binary reachable) leave their object
# files behind; the loaded .node file is all that runs.
find "$dir/node_modules" -type d -path '*/build/Release' -prune \
  -exec sh -c 'rm -rf "$1/obj" "$1/obj.target" "$1/.deps" "$1"/*.a' _ {} \;

if [ -e "$dir/node_modules/typescript" ] || [ -e "$dir/src" ]; then
  echo "release: $dir holds TypeScript or sources; it must not" >&2
  exit 1
fi
chmod -R a+rX,go-w "$dir"

elapsed=$(($(date +%s) - started))
echo "release: $dir ready in ${elapsed}s, $(du -sh "$dir" | cut -f1) ($(du -sh "$dir/node_modules" | cut -f1) of it node_modules)"
echo "release: start it with: node $dir/dist/main.js"
