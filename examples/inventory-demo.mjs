#!/usr/bin/env node
// The inventory demo: worker PROCESSES compete to buy from a stock of 10 items kept in a JSON
// file and guarded by a lock. Exactly 10 are sold — no oversell — and every sale is stamped
// with the fencing token of the lock that protected it. The stock file itself refuses a write
// whose token is older than the newest it has seen: one worker stalls past its lease on
// purpose, another takes the lock over, and the stalled worker's late write is refused.
//
//   pnpm demo                                  file backend in a temporary directory
//   node examples/inventory-demo.mjs file:///tmp/my-locks
//   node examples/inventory-demo.mjs memory    one process, in-memory provider
//   node examples/inventory-demo.mjs redis://127.0.0.1:6379   (any lock URL: see docs/getting-started.md)
//
// The demo itself lives in @lockkit/cli (`lockkit demo [url]`); this script builds what it
// needs in this repository and runs it.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Newest modification time of the files under `directory` (0 if there are none). */
function newest(directory) {
  let latest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

// The demo runs on built packages; rebuild the two it adds to core and file when stale.
for (const name of ['lockkit', 'cli']) {
  const packageDirectory = join(root, 'packages', name);
  const built = join(packageDirectory, 'dist', 'index.js');
  if (!existsSync(built) || statSync(built).mtimeMs < newest(join(packageDirectory, 'src'))) {
    execFileSync('pnpm', ['--silent', 'build'], { cwd: packageDirectory, stdio: 'inherit' });
  }
}

const { main } = await import(pathToFileURL(join(root, 'packages/cli/dist/main.js')).href);
process.exitCode = await main(['demo', ...process.argv.slice(2)]);
