#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what is missing (pnpm, the Debian
# server packages), builds, lints, typechecks, runs every package's tests against real
# throwaway servers, checks what we publish, and runs the conformance mutation check.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
started=$(date +%s)
step() { printf '\n=== %s (%ss)\n' "$1" "$(( $(date +%s) - started ))"; }

step "system packages"
bash scripts/install-system-deps.sh
step "build";            pnpm -s build
step "lint";             pnpm -s lint
step "typecheck";        pnpm -s typecheck
step "tests"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
pnpm -s test:packages 2>&1 | tee "$log"
step "publish checks";   pnpm -s check:publish
step "mutation check";   pnpm -s mutation
step "all green"
# One plain closing line with every package's vitest totals.
sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^\S+:test: +Tests ' | awk '
  { for (i = 1; i <= NF; i++) { if ($i == "passed") p += $(i-1); if ($i == "failed") f += $(i-1); if ($i == "skipped") s += $(i-1) } }
  END { printf "%d passed, %d failed, %d skipped\n", p, f, s }'
