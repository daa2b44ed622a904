import { describe, expect, it } from 'vitest';
import { acquirerFor, type Fixture, titled } from '../support.js';

const awkwardNames: readonly string[] = [
  '',
  'x'.repeat(10_000),
  'Ünïcödé 🔒 名前',
  '/',
  '..',
  '../../etc/passwd',
  '\0',
  "' OR 1=1 --",
  '{tag}',
  'KEYS[1] .. ARGV[1]',
  'a:b',
  ' ',
];

/** Any string is a name; distinct names are distinct locks; case matters. */
export function nameCases(fx: Fixture): void {
  describe('names', () => {
    it('awkward names all work, and are all distinct locks (held at the same time)', async () => {
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const prefix = fx.name('names');
      for (const spec of [
        { kind: 'mutex', maxCount: 1 },
        { kind: 'write', maxCount: 1 },
        { kind: 'semaphore', maxCount: 1 },
      ] as const) {
        const held = [];
        for (const name of awkwardNames) {
          const handle = await acquirerFor(p1, prefix + name, spec).tryAcquire();
          expect(handle, `${spec.kind} ${JSON.stringify(name.slice(0, 20))}`).not.toBeNull();
          expect(handle?.name).toBe(prefix + name);
          held.push(handle!);
        }
        for (const name of awkwardNames) {
          expect(await acquirerFor(p2, prefix + name, spec).tryAcquire()).toBeNull();
        }
        for (const handle of held) expect(await handle.release()).toBe(true);
      }
      const bare = await p1.createLock('').tryAcquire({ timeout: fx.ms(5000) });
      expect(bare).not.toBeNull();
      await bare?.release();
    });

    it('names differing only in case are different locks', async () => {
      const provider = await fx.provider();
      const base = fx.name('case');
      const upper = await provider.createLock(`${base}-LOCK`).tryAcquire();
      const lower = await provider.createLock(`${base}-lock`).tryAcquire();
      expect(upper).not.toBeNull();
      expect(lower).not.toBeNull();
      await upper?.release();
      await lower?.release();
    });

    it('a mutex, a RW lock and a semaphore with the same name are independent', async () => {
      const provider = await fx.provider();
      const name = fx.name('families');
      const mutex = await provider.createLock(name).tryAcquire();
      const writer = await provider.createReadWriteLock(name).tryAcquireWrite();
      const permit = await provider.createSemaphore(name, 1).tryAcquire();
      expect([mutex, writer, permit].every((handle) => handle !== null)).toBe(true);
      for (const handle of [mutex, writer, permit]) await handle?.release();
    });

    const golden = fx.options.goldenKeys;
    it.runIf(golden)(
      titled(
        'the name→key mapping matches its pinned golden values',
        golden ? undefined : 'no goldenKeys option (pinned in the backend tests)',
      ),
      () => {
        for (const [name, key] of golden!.expected) expect(String(golden!.map(name))).toBe(key);
      },
    );
  });
}
