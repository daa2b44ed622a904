#!/usr/bin/env bash
# Interleaved A/B of @lockkit/core at a git ref (the baseline) against the working tree's core,
# on throwaway Redis and PostgreSQL servers: `bash scripts/core-ab.sh <git-ref>`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
ref=${1:?usage: scripts/core-ab.sh <git-ref>}
scratch=$(mktemp -d)
trap 'git worktree remove --force "$scratch/tree" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
git worktree add --detach "$scratch/tree" "$ref" >/dev/null
ln -s "$PWD/node_modules" "$scratch/tree/node_modules"
(cd "$scratch/tree/packages/core" && "$OLDPWD/node_modules/.bin/tsc" -p tsconfig.build.json --outDir "$scratch/core-dist")
pnpm -s --filter @lockkit/bench... build >/dev/null
pnpm -s --filter @lockkit/bench core-ab "$scratch/core-dist"
