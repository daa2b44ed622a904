#!/usr/bin/env bash
# Interleaved A/B of the packages at a git ref (A, the baseline) against this checkout (B), on
# throwaway servers with durable settings (Redis, Redlock, PostgreSQL, MariaDB, ZooKeeper, etcd):
# `bash scripts/ab.sh <git-ref>`. Builds the ref's
# workspace in a scratch worktree (its own pnpm install, offline from the store when it can),
# then runs packages/bench/src/ab/ab.ts. Knobs: AB_ROUNDS, AB_SLICE_MS, AB_WORKERS_MS, AB_BACKENDS,
# AB_B_OPTIONS.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
ref=${1:?usage: scripts/ab.sh <git-ref>}
scratch=$(mktemp -d)
trap 'git worktree remove --force "$scratch/tree" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
git worktree add --detach "$scratch/tree" "$ref" >/dev/null
(
  cd "$scratch/tree"
  pnpm install --frozen-lockfile --prefer-offline >/dev/null
  pnpm -s --filter '@lockkit/redis...' --filter '@lockkit/postgres...' --filter '@lockkit/mysql...' --filter '@lockkit/zookeeper...' --filter '@lockkit/etcd...' run build >/dev/null
)
pnpm -s --filter '@lockkit/bench...' build >/dev/null
pnpm -s --filter @lockkit/bench ab "$scratch/tree"
