#!/usr/bin/env bash
# The inventory demo on the embedded default backend: no server needed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
pnpm --silent demo "$@"
