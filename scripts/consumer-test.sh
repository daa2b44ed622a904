#!/usr/bin/env bash
# The consumer test: installs what users install and runs it the way they do.
#
# Packs every public package (pnpm pack, so workspace: ranges become real ones), then for
# each client set (the oldest release of every peer range, and the newest of every major)
# creates a fresh app in a temporary directory and installs the tarballs there with npm — not
# pnpm, not the workspace. In each app it runs, against throwaway servers (@lockkit/testkit):
#   - each backend's smoke script (mutex, read-write lock, semaphore, fencing token, errors)
#     loaded as ESM (import) and as CommonJS (require), and lockkit's createLockProvider on
#     every URL scheme in both formats; @lockkit/opentelemetry's spans and metrics through the
#     real SDK, in both formats;
#   - Jest (CommonJS project, no ESM flags);
#   - tsc --strict, skipLibCheck false, with module node16 (CommonJS), nodenext and bundler,
#     and the node16 output run;
#   - an esbuild bundle (ESM and CommonJS) of an app using createLockProvider, run from a
#     directory without node_modules;
#   - the CLI through npx from the tarballs.
# Prints one line per cell (PASS/FAIL) and exits non-zero if any cell failed.
#
# Parameters (environment):
#   CONSUMER_SETS    which client sets to run: "lowest newest" (default), or one of them
#   LOWEST_CLIENTS   npm specs of the lowest set  (default: ioredis@5.2.5 pg@8.11.0 …)
#   NEWEST_CLIENTS   npm specs of the newest set  (default: ioredis@6 pg@8 mysql2@3 …)
#   CONSUMER_KEEP=1  keep the temporary directory (its path is printed)
# Needs: a built workspace (pnpm build), npm, and the Debian server packages.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fixtures="$repo/scripts/consumer"
started=$(date +%s)

# The client sets. "lowest": the oldest release each peer range admits (the ranges say
# where the test found the floor: ioredis 5.2.5 is the first 5.x with the named `Redis`
# export, pg 8.11.0 the first with `escapeLiteral`, mysql2 3.3.0 the first whose types pass
# skipLibCheck false) and the lowest version of our dependencies' ranges; "newest": the
# newest of every major we claim. TypeScript 5.9 and the newest. (The workspace's own tests
# run on the newest 5.x of ioredis.)
# @opentelemetry/api: 1.9.0 is the floor of @lockkit/opentelemetry's peer range; the newest set
# takes the newest 1.9.x, as the OpenTelemetry SDK 2.x (the last line that runs on Node 20,
# installed below for its smoke and the docs' snippets) accepts nothing newer.
LOWEST_CLIENTS=${LOWEST_CLIENTS:-"ioredis@5.2.5 pg@8.11.0 mysql2@3.3.0 node-zookeeper-client@1.1.3 proper-lockfile@4.1.2 @opentelemetry/api@1.9.0 typescript@5.9"}
NEWEST_CLIENTS=${NEWEST_CLIENTS:-"ioredis@6 pg@8 mysql2@3 node-zookeeper-client@1 proper-lockfile@4 @opentelemetry/api@~1.9 typescript@latest"}
CONSUMER_SETS=${CONSUMER_SETS:-"lowest newest"}
tools="jest@30 esbuild@0 @types/node@20"
# The OpenTelemetry SDK parts an app brings (one release line, so their classes match).
otel_sdk="@opentelemetry/sdk-trace-base@2.12.0 @opentelemetry/sdk-metrics@2.12.0 @opentelemetry/exporter-prometheus@0.223.0 @opentelemetry/context-async-hooks@2.12.0"
packages=(core file redis postgres mysql zookeeper etcd lockkit cli opentelemetry)

work=$(mktemp -d "${TMPDIR:-/tmp}/lockkit-consumer.XXXXXX")
# The apps must see only what npm installed into them: no NODE_PATH (pnpm's bin shims set
# one), and no node_modules above the work directory.
unset NODE_PATH
for dir in "$(dirname "$work")" /; do
  if [[ -e "$dir/node_modules" ]]; then echo "consumer test: $dir/node_modules would leak into the apps" >&2; exit 2; fi
done
# The smoke cells' lock directories go with $work (TMPDIR itself stays: the throwaway
# PostgreSQL runs as another user, who cannot enter $work).
mkdir -p "$work/tmp"
export LOCKKIT_CONSUMER_TMP="$work/tmp"
results=()
failures=0
servers_pid=""
cleanup() {
  if [[ -n "$servers_pid" ]]; then
    kill "$servers_pid" 2>/dev/null || true
    wait "$servers_pid" 2>/dev/null || true
  fi
  if [[ "${CONSUMER_KEEP:-}" == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

elapsed() { echo "$(($(date +%s) - started))s"; }

# cell <set> <name> <command…>: runs the command in the current app, records PASS/FAIL with
# the last line it printed (its output is shown in full on failure).
cell() {
  local set=$1 name=$2
  shift 2
  local log="$work/cell.log" t0 status
  t0=$(date +%s)
  if "$@" >"$log" 2>&1; then status=PASS; else status=FAIL; fi
  local line
  line=$(printf '%-7s %-28s %s %3ss  %s' "$set" "$name" "$status" "$(($(date +%s) - t0))" \
    "$(grep -v '^\s*$' "$log" | tail -n 1 | cut -c1-90)")
  echo "$line"
  results+=("$line")
  if [[ $status == FAIL ]]; then
    failures=$((failures + 1))
    sed 's/^/    | /' "$log" | tail -n 40
  fi
}

echo "consumer test: work directory $work"

# Throwaway servers, started while npm installs.
coproc SERVERS { exec node "$fixtures/servers.mjs"; }
servers_pid=$SERVERS_PID

echo "--- packing (${packages[*]}) ($(elapsed))"
mkdir -p "$work/tarballs"
for name in "${packages[@]}"; do
  (cd "$repo/packages/$name" && pnpm pack --pack-destination "$work/tarballs" >/dev/null)
done
declare -A tarball
for name in "${packages[@]}"; do
  case $name in
    lockkit) tarball[$name]=$(ls "$work/tarballs/"lockkit-[0-9]*.tgz) ;;
    *) tarball[$name]=$(ls "$work/tarballs/"lockkit-"$name"-[0-9]*.tgz) ;;
  esac
done

npm_install() {
  npm install --no-audit --no-fund --prefer-offline --loglevel=error "$@"
}

install_app() {
  local set=$1 app=$2 clients=$3
  mkdir -p "$app"
  # A CommonJS app (no "type"), as `npm init` makes one; overrides pin the dependencies'
  # versions of the set.
  node -e '
    const overrides = {};
    for (const spec of process.argv[1].split(" ")) {
      const at = spec.lastIndexOf("@");
      const name = spec.slice(0, at), version = spec.slice(at + 1);
      if (name === "node-zookeeper-client" || name === "proper-lockfile") overrides[name] = version;
    }
    process.stdout.write(JSON.stringify({ name: "consumer-app", version: "1.0.0", private: true, overrides }, null, 2));
  ' "$clients" >"$app/package.json"
  local lockkit_tgzs=()
  for name in "${packages[@]}"; do lockkit_tgzs+=("${tarball[$name]}"); done
  # shellcheck disable=SC2086 # the client and tool lists are word lists on purpose
  (cd "$app" && npm_install "${lockkit_tgzs[@]}" $clients $tools $otel_sdk)
  cp -r "$fixtures/." "$app/"
}

servers_json=""
await_servers() {
  if [[ -z "$servers_json" ]]; then
    read -r servers_json <&"${SERVERS[0]}" || { echo "the test servers did not start" >&2; exit 1; }
    export LOCKKIT_CONSUMER_SERVERS="$servers_json"
    mapfile -t server_urls < <(node -e '
      const s = JSON.parse(process.env.LOCKKIT_CONSUMER_SERVERS);
      console.log([s.redisUrls[0], s.postgresUrl, s.mysqlUrl, s.zookeeperUrl].join("\n"))')
  fi
}

typecheck() { # <module> <moduleResolution> <type>
  local dir="types-$1" module=$1 resolution=$2 type=$3
  mkdir -p "$dir" && cp types/app.ts types/run.ts "$dir/"
  printf '{ "type": "%s" }\n' "$type" >"$dir/package.json"
  cat >"$dir/tsconfig.json" <<EOF
{
  "compilerOptions": {
    "target": "ES2022", "lib": ["ES2023"], "module": "$module", "moduleResolution": "$resolution",
    "types": ["node"], "strict": true, "skipLibCheck": false, "outDir": "out", "rootDir": "."
  },
  "include": ["*.ts"]
}
EOF
  (cd "$dir" && ../node_modules/.bin/tsc -p . && echo "tsc $(../node_modules/.bin/tsc --version): no errors")
}

bundle() { # <format>
  local format=$1 out="$work/bundle-$1"
  mkdir -p "$out"
  local banner=()
  # ESM output that bundles CommonJS code (ioredis, pg, mysql2) needs a require for Node's
  # built-in modules: esbuild's documented banner.
  [[ $format == esm ]] && banner=(--banner:js="import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);")
  node_modules/.bin/esbuild bundle/app.js --bundle --platform=node --target=node20 \
    --format="$format" --external:pg-native --log-level=warning "${banner[@]}" \
    --outfile="$out/app.${format/esm/mjs}"
  local file_dir
  file_dir=$(mktemp -d "$work/bundle-locks.XXXXXX")
  (cd "$out" && node "app.${format/esm/mjs}" "file://$file_dir" "${server_urls[@]}")
}

cli_npx() { # <redis client spec>
  local cli_dir
  cli_dir=$(mktemp -d "$work/cli.XXXXXX")
  (cd "$cli_dir" && npx --yes --prefer-offline -p "${tarball[core]}" -p "${tarball[lockkit]}" \
    -p "${tarball[cli]}" -p "${tarball[redis]}" -p "$1" \
    lockkit run "${server_urls[0]}" npx-cell -- \
    node -e 'console.log("ran under the lock, token " + process.env.LOCKKIT_FENCING_TOKEN)')
}

for set in $CONSUMER_SETS; do
  case $set in
    lowest) clients=$LOWEST_CLIENTS ;;
    newest) clients=$NEWEST_CLIENTS ;;
    *) echo "unknown client set $set (lowest, newest)" >&2; exit 2 ;;
  esac
  app="$work/app-$set"
  echo "--- $set: npm install ${clients} ($(elapsed))"
  install_app "$set" "$app" "$clients"
  versions=$(cd "$app" && node -e '
    for (const n of ["ioredis", "pg", "mysql2", "node-zookeeper-client", "proper-lockfile", "@opentelemetry/api", "typescript", "jest"])
      process.stdout.write(`${n}@${require(`./node_modules/${n}/package.json`).version} `);')
  echo "--- $set: installed $versions($(elapsed))"
  await_servers
  cd "$app"
  for backend in file redis redlock postgres mysql zookeeper etcd url; do
    cell "$set" "esm import $backend" node smoke.mjs "$backend"
    cell "$set" "cjs require $backend" node smoke.cjs "$backend"
  done
  cell "$set" "esm import opentelemetry" node telemetry-smoke.mjs
  cell "$set" "cjs require opentelemetry" node telemetry-smoke.cjs
  cell "$set" "source maps resolve" node check-maps.cjs
  # The CLI is ESM only (ADR 0009): a CommonJS caller loads it through Node's require(esm).
  cell "$set" "cjs require @lockkit/cli" node -e 'const cli = require("@lockkit/cli");
    if (typeof cli.main !== "function") throw new Error("no main()"); console.log("main() loaded")'
  cell "$set" "jest (commonjs)" node_modules/.bin/jest --rootDir jest --ci
  cell "$set" "tsc module node16 (cjs)" typecheck node16 node16 commonjs
  cell "$set" "run node16 output" node types-node16/out/run.js "$work"
  cell "$set" "tsc module nodenext (esm)" typecheck nodenext nodenext module
  cell "$set" "tsc module esnext+bundler" typecheck esnext bundler module
  cell "$set" "esbuild bundle esm" bundle esm
  cell "$set" "esbuild bundle cjs" bundle cjs
  cell "$set" "npx lockkit run (redis)" cli_npx "$(tr ' ' '\n' <<<"$clients" | grep '^ioredis@')"
  # Every code block of README.md, docs/ and the package READMEs, type-checked against what
  # npm installed here (the tests' own step also runs them, against the workspace).
  cell "$set" "doc snippets type-check" node "$repo/scripts/doc-snippets.mjs" --packages-from "$app" --no-run
  cd "$repo"
done

echo
echo "=== consumer test matrix ($(elapsed))"
printf '%s\n' "${results[@]}"
if ((failures > 0)); then
  echo "consumer test: $failures cell(s) FAILED"
  exit 1
fi
echo "consumer test: all ${#results[@]} cells passed"
