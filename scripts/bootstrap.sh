#!/usr/bin/env bash
# Makes sure pnpm and the workspace's packages are installed. Sourced by demo.sh and test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1

node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ]; then
  echo "lockkit needs Node.js 20.19 or newer (found: $(node -v 2>/dev/null || echo none))." >&2
  exit 1
fi
if ! command -v pnpm >/dev/null 2>&1; then
  echo "pnpm not found: installing pnpm@10 with npm…" >&2
  if ! npm install -g pnpm@10 >/dev/null 2>&1; then
    echo "Could not install pnpm globally. Run 'npm install -g pnpm@10' (or use sudo), then retry." >&2
    exit 1
  fi
fi
if [ ! -d node_modules/.pnpm ] || [ pnpm-lock.yaml -nt node_modules/.modules.yaml ]; then
  pnpm install --frozen-lockfile
fi
