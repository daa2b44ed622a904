/**
 * Property-based: random bad arguments to the public API — names, maxCount, acquire options,
 * provider options — give an `InvalidArgumentError` before any I/O. The file provider points
 * at a directory that does not exist yet: it would be created by the first I/O, so it still
 * not existing afterwards shows that nothing was done. FUZZ_SEED reruns another seed.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryLockProvider, InvalidArgumentError, MemoryLockStore } from '@lockkit/core';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createFileLockProvider } from '../src/index.js';

const seed = Number(process.env['FUZZ_SEED'] ?? 24);
const parent = mkdtempSync(join(tmpdir(), 'lockkit-file-bad-inputs-'));
afterAll(() => rmSync(parent, { recursive: true, force: true }));
const directory = join(parent, 'not-yet');

/** Anything that is not a string. */
const notAString = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.bigInt(),
  fc.object(),
  fc.array(fc.string(), { maxLength: 2 }),
);

/** Not an integer in [1, 2^31-1]. */
const badCount = fc.oneof(
  fc.integer({ max: 0 }),
  fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }),
  fc.double({ noInteger: true }),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, '2', null),
);

/** Not `Infinity` nor a number in [0, 2^31-1]. */
const badTimeout = fc.oneof(
  fc.integer({ max: -1 }),
  fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }),
  fc.constantFrom(Number.NaN, Number.NEGATIVE_INFINITY, '100', null, true, 10n),
);

/** Acquire options that are wrong: a bad timeout, a non-signal, an unknown key, a non-object. */
const badAcquireOptions = fc.oneof(
  badTimeout.map((timeout) => ({ timeout })),
  fc.oneof(fc.string(), fc.integer(), fc.object()).map((signal) => ({ signal })),
  fc
    .string({ minLength: 1 })
    .filter((key) => !['timeout', 'signal', '__proto__'].includes(key))
    .map((key) => ({ [key]: 1 })),
  fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
);

const providers = [
  ['memory', () => createMemoryLockProvider({ store: new MemoryLockStore() })],
  ['file', () => createFileLockProvider({ directory })],
] as const;

function expectInvalid(call: () => unknown): Promise<void> | void {
  let result: unknown;
  try {
    result = call();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return;
  }
  return expect(result).rejects.toBeInstanceOf(InvalidArgumentError);
}

describe.each(providers)('bad arguments on the %s provider', (_, create) => {
  const provider = create();
  afterAll(() => provider.close());

  it('a name that is not a string', () => {
    fc.assert(
      fc.property(notAString, (name) => {
        for (const make of [
          () => provider.createLock(name as unknown as string),
          () => provider.createReadWriteLock(name as unknown as string),
          () => provider.createSemaphore(name as unknown as string, 2),
          () => provider.createElection(name as unknown as string),
        ]) {
          expect(make).toThrow(InvalidArgumentError);
        }
      }),
      { numRuns: 100, seed },
    );
  });

  it('a maxCount that is not an integer in [1, 2^31-1]', () => {
    fc.assert(
      fc.property(fc.string(), badCount, (name, maxCount) => {
        expect(() => provider.createSemaphore(name, maxCount as number)).toThrow(
          InvalidArgumentError,
        );
      }),
      { numRuns: 100, seed },
    );
  });

  it('bad acquire options, on every acquire method', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), badAcquireOptions, async (name, options) => {
        const bad = options as never;
        const lock = provider.createLock(name);
        const rw = provider.createReadWriteLock(name);
        const semaphore = provider.createSemaphore(name, 3);
        for (const call of [
          () => lock.acquire(bad),
          () => lock.tryAcquire(bad),
          () => lock.withLock(() => 1, bad),
          () => rw.acquireRead(bad),
          () => rw.tryAcquireWrite(bad),
          () => semaphore.acquire(bad),
          () => semaphore.tryAcquire(bad),
          () => provider.createElection(name).campaign(bad),
        ]) {
          await expectInvalid(call);
        }
      }),
      { numRuns: 60, seed },
    );
  });
});

describe('bad provider options', () => {
  it('file: unknown keys and out-of-range numbers', () => {
    const numeric = fc.constantFrom('leaseMs', 'pollIntervalMs');
    fc.assert(
      fc.property(
        fc.oneof(
          fc
            .string({ minLength: 1 })
            .filter(
              (key) =>
                ![
                  'directory',
                  'namespace',
                  'leaseMs',
                  'autoExtend',
                  'pollIntervalMs',
                  'io',
                  '__proto__',
                ].includes(key),
            )
            .map((key) => ({ [key]: 1 })),
          fc.tuple(numeric, badTimeout).map(([key, value]) => ({ [key]: value })),
          fc.oneof(fc.integer(), fc.string()).map((autoExtend) => ({ autoExtend })),
        ),
        (extra) => {
          expect(() => createFileLockProvider({ directory, ...(extra as object) })).toThrow(
            InvalidArgumentError,
          );
        },
      ),
      { numRuns: 100, seed },
    );
  });

  it('none of the bad calls above touched the file system', async () => {
    expect(existsSync(directory)).toBe(false);
    // The control: a good call does create the directory.
    const provider = createFileLockProvider({ directory });
    const handle = await provider.createLock('control').tryAcquire();
    await handle?.release();
    await provider.close();
    expect(existsSync(directory)).toBe(true);
  });
});
