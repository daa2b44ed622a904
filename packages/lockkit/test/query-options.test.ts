import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { type BackendId, backends, createLockProvider, type OptionType } from '../src/index.js';

// Every option lockkit lets a URL set must be one the backend's factory accepts: the
// factories reject unknown keys, validate before any I/O and connect only on first use, so
// creating a provider from a URL that sets every option proves the tables have not drifted.

const directory = mkdtempSync(join(tmpdir(), 'lockkit-query-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const baseUrls: Record<BackendId, string> = {
  memory: 'memory:',
  file: pathToFileURL(directory).href,
  redis: 'redis://127.0.0.1:1',
  postgres: 'postgres://nobody@127.0.0.1:1/none',
  mysql: 'mysql://nobody@127.0.0.1:1/none',
  zookeeper: 'zookeeper://127.0.0.1:1',
  etcd: 'etcd://127.0.0.1:1',
};

/** A valid value for each option (by name where the type alone does not fit). */
function sample(name: string, type: OptionType): string {
  const byName: Record<string, string> = {
    io: 'async',
    fencing: 'table',
    fencingTable: 'lockkit_tokens',
    fencingSequence: 'lockkit_tokens',
    basePath: '/locks',
    sessionTimeoutSeconds: '60',
    commandTimeoutMs: '200',
    maxReaders: '16',
    sharedConnections: '2',
    maxWaitConnections: '2',
    idleConnections: '1',
    minReplicas: '1',
    replicaTimeoutMs: '100',
  };
  return byName[name] ?? (type === 'number' ? '3000' : type === 'boolean' ? 'false' : 'app');
}

describe('every query option reaches the backend factory', () => {
  it.each(Object.values(backends).map((backend) => [backend.id, backend] as const))(
    '%s',
    async (id, backend) => {
      const query = Object.entries(backend.queryOptions)
        .map(([name, type]) => `${name}=${encodeURIComponent(sample(name, type))}`)
        .join('&');
      const provider = await createLockProvider(`${baseUrls[id]}?${query}`);
      try {
        expect(provider.backend).toBe(id);
      } finally {
        await provider.close();
      }
    },
  );

  it('a wrong value is refused by the backend, before any I/O', async () => {
    await expect(createLockProvider(`${baseUrls.file}?leaseMs=5`)).rejects.toThrow(/leaseMs/);
    await expect(createLockProvider('redis://127.0.0.1:1?commandTimeoutMs=99999')).rejects.toThrow(
      /commandTimeoutMs/,
    );
  });
});
