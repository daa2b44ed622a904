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
step "tests";            pnpm -s test:packages
step "publish checks";   pnpm -s check:publish
step "mutation check";   pnpm -s mutation
step "all green"
