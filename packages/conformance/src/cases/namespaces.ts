import { describe, expect, it } from 'vitest';
import { acquirerFor, type Fixture, type LockSpec } from '../support.js';

const kinds: readonly LockSpec[] = [
  { kind: 'mutex', maxCount: 1 },
  { kind: 'write', maxCount: 1 },
  { kind: 'semaphore', maxCount: 1 },
];

/** Names a lossy mapping (case folding, normalisation, truncation, sanitising) would merge. */
const lookalikes: readonly (readonly [string, string])[] = [
  ['Lock', 'lock'],
  ['caf\u00e9', 'cafe\u0301'], // NFC vs NFD
  ['a', 'a\0'],
  ['a', 'a '],
  ['', ' '],
  [`${'x'.repeat(300)}1`, `${'x'.repeat(300)}2`],
  ['y'.repeat(10_000), `${'y'.repeat(10_000)}y`],
  ['a.b', 'a_b'],
  ['a/b', 'a:b'],
  ['a{b}', 'a_b_'],
  ['\ud800', '\udc00'], // lone surrogates: a lossy UTF-8 encoding makes both U+FFFD
];

/**
 * (namespace, name) pairs a naive "namespace + separator + name" mapping would merge; `u`
 * keeps each run's pairs apart from other runs.
 */
function separatorPairs(u: string): readonly (readonly [[string, string], [string, string]])[] {
  return [
    [
      [`${u}app`, 'b:c'],
      [`${u}app:b`, 'c'],
    ],
    [
      [`${u}app`, '/c'],
      [`${u}app/`, 'c'],
    ],
    [
      [`${u}app.b`, 'c'],
      [`${u}app`, 'b.c'],
    ],
    [
      ['', `${u}app:c`],
      [`${u}app`, 'c'],
    ],
    [
      [`${u}App`, 'c'],
      [`${u}app`, 'c'],
    ],
    [
      [`${u}a`, 'b\0c'],
      [`${u}a\0b`, 'c'],
    ],
  ];
}

/** Distinct names and namespaces are distinct locks; the same namespace excludes. */
export function namespaceCases(fx: Fixture): void {
  describe('lookalike names and namespaces', () => {
    it('names that differ only where a lossy mapping would merge them are distinct locks', async () => {
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const prefix = fx.name('lookalike');
      for (const spec of kinds) {
        for (const [a, b] of lookalikes) {
          const what = `${spec.kind} ${JSON.stringify(a.slice(-8))} vs ${JSON.stringify(b.slice(-8))}`;
          const first = await acquirerFor(p1, prefix + a, spec).tryAcquire();
          expect(first, what).not.toBeNull();
          const second = await acquirerFor(p2, prefix + b, spec).tryAcquire();
          expect(second, what).not.toBeNull();
          // And each still excludes itself.
          expect(await acquirerFor(p2, prefix + a, spec).tryAcquire(), what).toBeNull();
          expect(await acquirerFor(p1, prefix + b, spec).tryAcquire(), what).toBeNull();
          expect(await first!.release()).toBe(true);
          expect(await second!.release()).toBe(true);
        }
      }
    });

    it('two namespaces never exclude each other; the same namespace does', async () => {
      const name = fx.name('namespaced');
      const [a1, a2, b, none] = [
        await fx.provider({ namespace: 'tenant-a' }),
        await fx.provider({ namespace: 'tenant-a' }),
        await fx.provider({ namespace: 'tenant-b' }),
        await fx.provider(),
      ];
      for (const spec of [...kinds, { kind: 'read', maxCount: 1 } as const]) {
        const held = await acquirerFor(a1, name, spec).tryAcquire();
        expect(held, spec.kind).not.toBeNull();
        const blocker = spec.kind === 'read' ? ({ kind: 'write', maxCount: 1 } as const) : spec;
        expect(
          await acquirerFor(a2, name, blocker).tryAcquire(),
          `${spec.kind} same ns`,
        ).toBeNull();
        for (const other of [b, none]) {
          const free = await acquirerFor(other, name, blocker).tryAcquire();
          expect(free, `${spec.kind} other namespace`).not.toBeNull();
          await free?.release();
        }
        expect(await held!.release()).toBe(true);
      }
    });

    it('namespace/name pairs a separator would merge are distinct locks', async () => {
      for (const [[nsA, nameA], [nsB, nameB]] of separatorPairs(fx.name('separator'))) {
        const what = `${JSON.stringify([nsA, nameA])} vs ${JSON.stringify([nsB, nameB])}`;
        const pa = await fx.provider({ namespace: nsA });
        const pb = await fx.provider({ namespace: nsB });
        const first = await pa.createLock(nameA).tryAcquire();
        expect(first, what).not.toBeNull();
        const second = await pb.createLock(nameB).tryAcquire();
        expect(second, what).not.toBeNull();
        await first?.release();
        await second?.release();
      }
    });
  });
}
