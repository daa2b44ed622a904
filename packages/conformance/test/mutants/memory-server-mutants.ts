/** Memory mutants whose bug is on the "server" (FlawedStore): queues, counts, keys, tokens. */
import type { ProviderOptions } from '../../src/index.js';
import { check, type Mutant, type WitnessKit } from './types.js';

/** Holds `a` (in `nsA`) and checks `b` (in `nsB`) is still free: distinct locks. */
async function distinct(
  kit: WitnessKit,
  a: string,
  b: string,
  nsA?: ProviderOptions,
  nsB?: ProviderOptions,
): Promise<void> {
  const [p1, p2] = [await kit.provider(nsA), await kit.provider(nsB)];
  const held = await p1.createLock(a).acquire();
  const other = await p2.createLock(b).tryAcquire();
  await held.release();
  check(
    other !== null,
    `${JSON.stringify(b.slice(-6))} merged with ${JSON.stringify(a.slice(-6))}`,
  );
  await other.release();
}

/** Readers r1, writer queued, two readers queued; the writer's release must free both. */
async function readersBehindWriter(kit: WitnessKit): Promise<number> {
  const p = await kit.provider();
  const rw = p.createReadWriteLock(kit.name('rbw'));
  const r1 = await rw.acquireRead();
  const writer = rw.acquireWrite();
  const waiting = [rw.acquireRead({ timeout: 300 }), rw.acquireRead({ timeout: 300 })];
  await r1.release();
  await (await writer).release();
  const results = await Promise.allSettled(waiting);
  for (const r of results) if (r.status === 'fulfilled') await r.value.release();
  return results.filter((r) => r.status === 'fulfilled').length;
}

export const memoryServerMutants: readonly Mutant[] = [
  {
    name: 'lifo-queue',
    clause: '10 fairness (fifo)',
    why: 'a stack is the easiest queue to write, and LIFO still grants everyone eventually',
    backend: 'memory',
    flaws: ['lifo'],
    async witness(kit) {
      const p = await kit.provider();
      const lock = p.createLock(kit.name('lifo'));
      const held = await lock.acquire();
      const order: number[] = [];
      const waits = [0, 1, 2].map((i) =>
        lock.acquire().then((h) => {
          order.push(i);
          return h.release();
        }),
      );
      await held.release();
      await Promise.all(waits);
      check(order.join() === '0,1,2', `grant order ${order.join()}`);
    },
  },
  {
    name: 'readers-barge',
    clause: '10 fairness (writer preference)',
    why: 'a reader only checks "is a writer holding?", not "is a writer waiting?"',
    backend: 'memory',
    flaws: ['readers-barge'],
    async witness(kit) {
      const p = await kit.provider();
      const rw = p.createReadWriteLock(kit.name('barge'));
      const r1 = await rw.acquireRead();
      const writer = rw.acquireWrite();
      const r2 = await rw.tryAcquireRead();
      await r2?.release();
      await r1.release();
      await (await writer).release();
      check(r2 === null, 'a new reader got in ahead of a waiting writer');
    },
  },
  {
    name: 'one-reader-per-release',
    clause: '10 fairness (readers released together)',
    why: 'the wake-up loop grants the queue head and stops, like a mutex',
    backend: 'memory',
    flaws: ['one-reader-per-release'],
    async witness(kit) {
      check((await readersBehindWriter(kit)) === 2, 'waiting readers were not released together');
    },
  },
  {
    name: 'semaphore-off-by-one',
    clause: '1 exclusion (semaphore count)',
    why: '`<=` where `<` was meant when counting permits',
    backend: 'memory',
    flaws: ['semaphore-off-by-one'],
    async witness(kit) {
      const sem = (await kit.provider()).createSemaphore(kit.name('obo'), 2);
      const held = [await sem.acquire(), await sem.acquire()];
      const third = await sem.tryAcquire();
      for (const h of [...held, third]) await h?.release();
      check(third === null, 'a third permit of two was granted');
    },
  },
  {
    name: 'writer-ignores-readers',
    clause: '1 exclusion (read-write)',
    why: 'the writer checks only for another writer',
    backend: 'memory',
    flaws: ['writer-ignores-readers'],
    async witness(kit) {
      const rw = (await kit.provider()).createReadWriteLock(kit.name('wir'));
      const reader = await rw.acquireRead();
      const writer = await rw.tryAcquireWrite();
      await writer?.release();
      await reader.release();
      check(writer === null, 'a writer got in beside a reader');
    },
  },
  {
    name: 'readers-exclusive',
    clause: 'read-write lock: many readers',
    why: 'the read path reuses the mutex check',
    backend: 'memory',
    flaws: ['readers-exclusive'],
    async witness(kit) {
      const rw = (await kit.provider()).createReadWriteLock(kit.name('rx'));
      const r1 = await rw.acquireRead();
      const r2 = await rw.tryAcquireRead();
      await r2?.release();
      await r1.release();
      check(r2 !== null, 'a second reader was refused');
    },
  },
  {
    name: 'permit-stack',
    clause: '5 release (ownership, semaphore)',
    why: 'permits kept as a counter/stack: release frees "a" permit, not this one',
    backend: 'memory',
    flaws: ['permit-stack'],
    async witness(kit) {
      const sem = (await kit.provider()).createSemaphore(kit.name('stack'), 3);
      const [a, b] = [await sem.acquire(), await sem.acquire()];
      await a.release();
      const stillB = await b.release();
      check(stillB, 'releasing the first permit freed the second');
    },
  },
  {
    name: 'token-reset',
    clause: '8 fencing tokens (never go back)',
    why: 'the counter is stored with the lock and deleted with it',
    backend: 'memory',
    flaws: ['token-reset'],
    async witness(kit) {
      const lock = (await kit.provider()).createLock(kit.name('reset'));
      const first = await lock.acquire();
      await first.release();
      const second = await lock.acquire();
      await second.release();
      check(second.fencingToken > first.fencingToken, 'the token went back after a release');
    },
  },
  {
    name: 'withdraw-leak',
    clause: '4 abort (no leaked grant)',
    why: 'cancelling a queued wait forgets to dequeue it; its later grant has no owner',
    backend: 'memory',
    flaws: ['withdraw-leak'],
    async witness(kit) {
      const lock = (await kit.provider()).createLock(kit.name('leak'));
      const held = await lock.acquire();
      await lock.acquire({ timeout: 20 }).catch(() => undefined);
      await held.release();
      const again = await lock.tryAcquire();
      await again?.release();
      check(again !== null, 'the lock stayed taken by a waiter that gave up');
    },
  },
  {
    name: 'phantom-writer',
    clause: 'backend: a waiter that gave up leaves no state',
    why: 'the "writer waiting" marker is set on queueing and not cleared on give-up',
    backend: 'memory',
    flaws: ['phantom-writer'],
    async witness(kit) {
      const rw = (await kit.provider()).createReadWriteLock(kit.name('phantom'));
      const reader = await rw.acquireRead();
      await rw.acquireWrite({ timeout: 20 }).catch(() => undefined);
      const second = await rw.tryAcquireRead();
      await second?.release();
      await reader.release();
      check(second !== null, 'a writer that timed out still blocks readers');
    },
  },
  {
    name: 'delayed-wakeup',
    clause: '9 notified waiting (latency)',
    why: 'wake-ups debounced on a timer to batch releases',
    backend: 'memory',
    flaws: ['delayed-wakeup'],
    async witness(kit) {
      const lock = (await kit.provider()).createLock(kit.name('delay'));
      const held = await lock.acquire();
      const waiting = lock.acquire().then(() => performance.now());
      const at = performance.now();
      await held.release();
      const grantedAt = await waiting;
      check(grantedAt - at < 100, `handoff took ${Math.round(grantedAt - at)} ms`);
    },
  },
  ...(
    [
      ['case-folded', 'case-folded', 'keys lower-cased "to be safe"', 'Lock', 'lock'],
      [
        'nfc-normalised',
        'nfc',
        'names normalised to NFC before hashing',
        'caf\u00e9',
        'cafe\u0301',
      ],
      [
        'truncated-names',
        'truncated',
        'names cut to fit a key-length limit',
        `${'x'.repeat(300)}1`,
        `${'x'.repeat(300)}2`,
      ],
      ['nul-trimmed', 'nul-trimmed', 'C-string handling drops a trailing NUL', 'a', 'a\0'],
      ['blank-trimmed', 'blank-trimmed', 'names trimmed "to be tidy"', 'a', 'a '],
      [
        'lossy-utf8',
        'lossy-utf8',
        'names round-tripped through UTF-8: lone surrogates become U+FFFD',
        '\ud800',
        '\udc00',
      ],
    ] as const
  ).map(
    ([name, flaw, why, a, b]): Mutant => ({
      name,
      clause: '11 names (distinct)',
      why,
      backend: 'memory',
      flaws: [flaw],
      witness: (kit) => {
        const prefix = kit.name('n');
        return distinct(kit, prefix + a, prefix + b);
      },
    }),
  ),
  {
    name: 'namespace-ignored',
    clause: '11 names (namespace isolates)',
    why: 'the namespace option is accepted but never reaches the key',
    backend: 'memory',
    flaws: ['namespace-ignored'],
    witness: (kit) => {
      const name = kit.name('ns');
      return distinct(kit, name, name, { namespace: 'a' }, { namespace: 'b' });
    },
  },
  {
    name: 'namespace-case-folded',
    clause: '11 names (namespace isolates)',
    why: 'the namespace is lower-cased like a host name',
    backend: 'memory',
    flaws: ['namespace-case-folded'],
    witness: (kit) => {
      const u = kit.name('ns-case');
      return distinct(kit, 'c', 'c', { namespace: `${u}App` }, { namespace: `${u}app` });
    },
  },
  {
    name: 'namespace-concat',
    clause: '11 names (namespace isolates)',
    why: 'key = namespace + ":" + name, so ("a", "b:c") and ("a:b", "c") collide',
    backend: 'memory',
    flaws: ['namespace-concat'],
    witness: (kit) => {
      const u = kit.name('sep');
      return distinct(kit, 'b:c', 'c', { namespace: `${u}a` }, { namespace: `${u}a:b` });
    },
  },
  {
    name: 'families-shared',
    clause: 'a mutex, a RW lock and a semaphore with one name are independent',
    why: 'a mutex implemented as semaphore(1) on the same key',
    backend: 'memory',
    flaws: ['families-shared'],
    async witness(kit) {
      const p = await kit.provider();
      const name = kit.name('fam');
      const mutex = await p.createLock(name).acquire();
      const permit = await p.createSemaphore(name, 1).tryAcquire();
      await permit?.release();
      await mutex.release();
      check(permit !== null, 'the semaphore shares the mutex key');
    },
  },
];
