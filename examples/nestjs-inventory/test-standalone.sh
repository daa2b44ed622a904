#!/usr/bin/env bash
# The example outside the repository, the way a user gets it: packs the lockkit packages it
# uses, copies the example out with copy-out.mjs, installs with npm, builds and runs its tests
# there. Run from anywhere after `pnpm build`; needs the npm registry for NestJS and friends.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repository=$(cd "$here/../.." && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/lockkit-nest-standalone-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
for package in core file postgres lockkit testkit; do
  (cd "$repository/packages/$package" && pnpm -s pack --pack-destination "$scratch/tarballs" >/dev/null)
done
node "$here/copy-out.mjs" "$scratch/shop" --tarballs "$scratch/tarballs"
cd "$scratch/shop"
npm install --no-audit --no-fund --loglevel=error
npm run -s typecheck
npm test
