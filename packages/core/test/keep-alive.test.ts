import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const dist = new URL('../dist/for-backends.js', import.meta.url).href;

describe('a pending acquire keeps the process alive', () => {
  it('a waiter on a watch-based backend with nothing else scheduled still gets its lock', () => {
    // A backend that never notifies: only core's safety poll can wake the waiter. If the
    // poll timer were unref'd, Node would exit with "unsettled top-level await" (code 13).
    const script = `
      import { LockProvider, Wakeup } from ${JSON.stringify(dist)};
      let attempts = 0;
      const backend = {
        backend: 'silent', pollIntervalMs: 50,
        capabilities: { crossProcess: false, leases: false, fifo: false, lostDetectionMs: 0, abandonedReleaseMs: 0, unavailableMs: 0 },
        async tryAcquire() { attempts += 1; return attempts < 3 ? null : { fencingToken: 1n }; },
        watch() { return new Wakeup(); },
        async release() { return true; },
        async close() {},
      };
      const handle = await new LockProvider(backend).createLock('x').acquire();
      console.log('acquired after', attempts, 'attempts');
    `;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('acquired after 3 attempts');
    expect(result.status).toBe(0);
  });
});
