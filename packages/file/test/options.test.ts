import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { InvalidArgumentError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { createFileLockProvider, type FileLockProviderOptions } from '../src/index.js';
import { temporaryDirectory } from './support.js';

const directory = temporaryDirectory('options');

describe('options', () => {
  const target = join(directory, 'never-created');
  it.each<[string, unknown]>([
    ['no options', undefined],
    ['no directory', {}],
    ['an empty directory', { directory: '' }],
    ['a directory that is not a string', { directory: 42 }],
    ['an http URL', { directory: new URL('http://example.com/locks') }],
    ['leaseMs 99', { directory: target, leaseMs: 99 }],
    ['leaseMs 1500.5', { directory: target, leaseMs: 1500.5 }],
    ['leaseMs NaN', { directory: target, leaseMs: Number.NaN }],
    ['pollIntervalMs 0', { directory: target, pollIntervalMs: 0 }],
    ['autoExtend "yes"', { directory: target, autoExtend: 'yes' }],
    ['io "fast"', { directory: target, io: 'fast' }],
    ['namespace 1', { directory: target, namespace: 1 }],
    ['owner 7', { directory: target, owner: 7 }],
    ["an unknown option (proper-lockfile's stale)", { directory: target, stale: 1000 }],
  ])('%s → InvalidArgumentError, before any I/O', (_label, options) => {
    expect(() => createFileLockProvider(options as FileLockProviderOptions)).toThrow(
      InvalidArgumentError,
    );
    try {
      createFileLockProvider(options as FileLockProviderOptions);
    } catch (error) {
      expect(InvalidArgumentError.isInstance(error)).toBe(true);
      expect(error).toBeInstanceOf(RangeError);
    }
    expect(existsSync(target)).toBe(false);
  });

  it('creates the directory on first use, not at construction', async () => {
    const target = join(directory, 'lazy', 'nested');
    const provider = createFileLockProvider({ directory: target });
    expect(existsSync(target)).toBe(false);
    await (await provider.createLock('x').acquire()).release();
    expect(existsSync(target)).toBe(true);
    await provider.close();
  });

  it('accepts a file: URL and resolves relative paths once, at construction', async () => {
    const fromUrl = createFileLockProvider({ directory: pathToFileURL(join(directory, 'url')) });
    expect(fromUrl.directory).toBe(join(directory, 'url'));
    const relative = createFileLockProvider({ directory: 'some/locks' });
    expect(relative.directory).toBe(resolve('some/locks'));
    await Promise.all([fromUrl.close(), relative.close()]);
  });

  it('passes the owner option on to the provider (default <hostname>:<pid>)', async () => {
    const labelled = createFileLockProvider({ directory, owner: 'batch ✓' });
    const plain = createFileLockProvider({ directory });
    expect(labelled.owner).toBe('batch ✓');
    expect(plain.owner).toBe(`${hostname()}:${process.pid}`);
    await Promise.all([labelled.close(), plain.close()]);
  });

  it('derives capabilities and defaults from the lease', async () => {
    const provider = createFileLockProvider({ directory, leaseMs: 3000 });
    expect(provider.leaseMs).toBe(3000);
    expect(provider.capabilities).toEqual({
      crossProcess: true,
      handOver: false,
      leases: true,
      minLeaseMs: Number.POSITIVE_INFINITY,
      weightedPermits: true,
      fifo: false,
      inspection: true,
      lostDetectionMs: 1250,
      abandonedReleaseMs: 3250,
      unavailableMs: 250,
    });
    expect(Object.isFrozen(provider.capabilities)).toBe(true);
    expect(createFileLockProvider({ directory }).leaseMs).toBe(30_000);
    await provider.close();
  });
});
