/**
 * Property-based: random malformed lock URLs give an `InvalidArgumentError` from
 * `parseLockUrl` (synchronously: nothing imported, nothing connected) and the same from
 * `createLockProvider`. The hosts are unroutable on purpose: a URL that got as far as a
 * connection attempt would not fail with this error. FUZZ_SEED reruns another seed.
 */
import { InvalidArgumentError } from '@lockkit/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { schemes } from '../src/backends.js';
import { createLockProvider, parseLockUrl } from '../src/index.js';

const seed = Number(process.env['FUZZ_SEED'] ?? 24);

/** A well-formed URL per backend whose query options lockkit checks itself. */
const bases = {
  memory: 'memory:',
  file: 'file:///tmp/lockkit-fuzz-never-created',
  redis: 'redis://192.0.2.1:6379',
  zookeeper: 'zookeeper://192.0.2.1:2181/locks',
  etcd: 'etcd://192.0.2.1:2379/locks',
} as const;
/** A numeric query option each of them takes. */
const numericOption = {
  memory: undefined,
  file: 'leaseMs',
  redis: 'leaseMs',
  zookeeper: 'sessionTimeoutMs',
  etcd: 'sessionTtlMs',
} as const;
const backend = fc.constantFrom(...(Object.keys(bases) as (keyof typeof bases)[]));
const word = fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9]{0,10}$/);

const badUrl = fc.oneof(
  // A scheme lockkit does not know.
  fc
    .stringMatching(/^[a-z][a-z0-9+.-]{0,9}$/)
    .filter((scheme) => !(scheme in schemes))
    .map((scheme) => `${scheme}://host/path`),
  // No scheme at all.
  fc.string({ maxLength: 30 }).filter((text) => !/^\s*[a-z][a-z0-9+.-]*:/i.test(text)),
  // A #fragment.
  fc.tuple(backend, fc.string({ maxLength: 10 })).map(([id, hash]) => `${bases[id]}#${hash}`),
  // A query parameter nobody takes (memory, files, ZooKeeper and etcd refuse them).
  fc
    .tuple(fc.constantFrom('memory', 'file', 'zookeeper', 'etcd'), word)
    .filter(
      ([, key]) =>
        !/^(namespace|leaseMs|autoExtend|pollIntervalMs|session|operation|connect|spin|command|key|prefix|user|password)/i.test(
          key,
        ),
    )
    .map(([id, key]) => `${bases[id as keyof typeof bases]}?${key}=1`),
  // A numeric option that is not a number.
  fc
    .tuple(
      fc.constantFrom('file', 'redis', 'zookeeper', 'etcd'),
      fc.stringMatching(/^[a-z_]{1,6}$/),
    )
    .map(
      ([id, value]) => `${bases[id as keyof typeof bases]}?${numericOption[id as 'file']}=${value}`,
    ),
  // The same option twice.
  fc.constantFrom('file', 'redis', 'zookeeper', 'etcd').map((id) => {
    const key = numericOption[id as 'file'];
    return `${bases[id as keyof typeof bases]}?${key}=5000&${key}=5000`;
  }),
  // Broken percent-encoding in the query.
  fc
    .tuple(backend, fc.stringMatching(/^%[g-z][0-9a-z]?$/))
    .map(([id, broken]) => `${bases[id]}?namespace=${broken}`),
);

describe('malformed lock URLs', () => {
  it('parseLockUrl throws InvalidArgumentError synchronously', () => {
    fc.assert(
      fc.property(badUrl, (url) => {
        expect(() => parseLockUrl(url)).toThrow(InvalidArgumentError);
      }),
      { numRuns: 300, seed },
    );
  });

  it('createLockProvider rejects with InvalidArgumentError', async () => {
    await fc.assert(
      fc.asyncProperty(badUrl, async (url) => {
        await expect(createLockProvider(url)).rejects.toBeInstanceOf(InvalidArgumentError);
      }),
      { numRuns: 100, seed },
    );
  });

  it('a URL that is not a string or URL object, and options that are not an object', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer(), fc.constant(null), fc.constant(undefined), fc.object()),
        fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
        (url, options) => {
          expect(() => parseLockUrl(url as unknown as string)).toThrow(InvalidArgumentError);
          expect(() => parseLockUrl('memory:', options as never)).toThrow(InvalidArgumentError);
        },
      ),
      { numRuns: 100, seed },
    );
  });
});
