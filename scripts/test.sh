#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what is missing (pnpm, the Debian
# server packages), builds, lints, typechecks, runs every package's tests against real
# throwaway servers, checks what we publish, installs the packed packages with npm into
# fresh apps and runs them there (scripts/consumer-test.sh), and runs the quick chaos run and
# the conformance mutation check.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
started=$(date +%s)
step() { printf '\n=== %s (%ss)\n' "$1" "$(( $(date +%s) - started ))"; }

step "system packages"
bash scripts/install-system-deps.sh
step "build";            pnpm -s build
step "doc snippets";     node scripts/doc-snippets.mjs   # type-checks and runs the docs' code, checks links
step "lint";             pnpm -s lint
step "typecheck";        pnpm -s typecheck
step "import cycles";    pnpm -s check:cycles   # madge: no module imports itself through others
step "tests"
# Two packages at a time (each starts its own throwaway servers): about half the wall time on
# 2 CPUs. The CPUs are then shared, so the timing-sensitive cases get twice their margins
# (LOCKKIT_TIME_SCALE, unless set already).
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! LOCKKIT_TIME_SCALE="${LOCKKIT_TIME_SCALE:-2}" pnpm -s test:packages 2>&1 | tee "$log"; then
  # Two packages' output interleave above; repeat each failing package's vitest failure report
  # (from "Failed Tests" to its totals) last, where a reader of the tail finds it.
  printf '\n=== failed tests, again\n'
  sed 's/\x1b\[[0-9;]*m//g' "$log" | awk '
    match($0, /^[^ ]+:test: /) { pkg = substr($0, 1, RLENGTH) }
    /Failed Tests [0-9]+/ { failing[pkg] = 1 }
    pkg in failing { print; n++ }
    / Test Files / { delete failing[pkg] }
    n >= 300 { print "(cut at 300 lines)"; exit }'
  exit 1
fi
# The quick chaos run on its own: its worker processes load both CPUs, which the package tests'
# timing bounds should not have to share.
step "chaos --quick";    pnpm -s --filter @lockkit/bench chaos --quick
step "publish checks";   pnpm -s check:publish
step "consumer test";    bash scripts/consumer-test.sh
step "mutation check";   pnpm -s mutation
step "all green"
# One plain closing line with every package's vitest totals.
sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^\S+:test: +Tests ' | awk '
  { for (i = 1; i <= NF; i++) { if ($i == "passed") p += $(i-1); if ($i == "failed") f += $(i-1); if ($i == "skipped") s += $(i-1) } }
  END { printf "%d passed, %d failed, %d skipped\n", p, f, s }'
