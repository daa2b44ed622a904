// The smoke steps every backend goes through, whichever module format loaded it: a mutex
// (exclusive, fencing token grows, a busy try is null, a timed wait is a LockTimeoutError
// that `instanceof` recognises), a read-write lock (two readers, no writer meanwhile) and a
// semaphore of 2. Throws on the first thing that is not as documented.
'use strict';
const assert = require('node:assert/strict');

/**
 * @param {() => Promise<import('lockkit').ILockProvider> | import('lockkit').ILockProvider} open
 * @param {{ LockTimeoutError: Function, LockError: Function }} errors the app's own imports
 */
async function runSmoke(open, errors) {
  const [a, b] = [await open(), await open()];
  const name = `consumer-${process.pid}-${Date.now()}`;
  try {
    const first = await a.createLock(name).acquire({ timeout: 10_000 });
    assert.equal(typeof first.fencingToken, 'bigint');
    assert.ok(first.fencingToken > 0n, 'fencing token is positive');
    assert.equal(await b.createLock(name).tryAcquire(), null, 'a held mutex is busy');
    const timedOut = await b
      .createLock(name)
      .acquire({ timeout: 50 })
      .then(
        () => undefined,
        (error) => error,
      );
    assert.ok(timedOut instanceof errors.LockTimeoutError, `LockTimeoutError, got ${timedOut}`);
    assert.ok(timedOut instanceof errors.LockError);
    assert.equal(timedOut.code, 'LOCK_TIMEOUT');
    assert.equal(await first.release(), true);
    const second = await b.createLock(name).acquire({ timeout: 10_000 });
    assert.ok(second.fencingToken > first.fencingToken, 'the next holder gets a larger token');
    assert.equal(await second.release(), true);

    const rw = `${name}:rw`;
    const r1 = await a.createReadWriteLock(rw).acquireRead({ timeout: 10_000 });
    const r2 = await b.createReadWriteLock(rw).acquireRead({ timeout: 10_000 });
    assert.equal(
      await b.createReadWriteLock(rw).tryAcquireWrite(),
      null,
      'readers keep writers out',
    );
    assert.equal(await r1.release(), true);
    assert.equal(await r2.release(), true);
    const w = await b.createReadWriteLock(rw).acquireWrite({ timeout: 10_000 });
    assert.ok(w.fencingToken > 0n);
    assert.equal(await w.release(), true);

    const sem = `${name}:sem`;
    const s1 = await a.createSemaphore(sem, 2).acquire({ timeout: 10_000 });
    const s2 = await b.createSemaphore(sem, 2).acquire({ timeout: 10_000 });
    assert.equal(await a.createSemaphore(sem, 2).tryAcquire(), null, 'two of two permits taken');
    assert.equal(await s1.release(), true);
    assert.equal(await s2.release(), true);
    return `token ${first.fencingToken}→${second.fencingToken}`;
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

module.exports = { runSmoke };
