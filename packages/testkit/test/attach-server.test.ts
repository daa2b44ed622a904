import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { attachServer } from '../src/index.js';
import { isProcessAlive } from '../src/process-tree.js';
import { connectionError, nextEvent, pauseProbeMs, settlesWithin } from './support.js';

// The servers come from test/global-setup.ts (setupServers) in vitest's main process.
const provided = inject('lockkitServers');
const clients: Redis[] = [];

function open(url: string): Redis {
  const redis = new Redis(url, { retryStrategy: () => null, maxRetriesPerRequest: 0 });
  redis.on('error', () => undefined);
  clients.push(redis);
  return redis;
}

afterAll(() => {
  for (const redis of clients) redis.disconnect();
});

describe('setupServers + attachServer', () => {
  it('provides URLs and descriptions of the servers started by the global setup', () => {
    expect(provided.redisUrls).toHaveLength(2);
    expect(provided.servers.redis.map((info) => info.url)).toEqual(provided.redisUrls);
    expect(provided.postgresUrl).toBeUndefined();
    const [info] = provided.servers.redis;
    expect(info).toMatchObject({ kind: 'redis', controllable: true });
    expect(info?.pid).toBeGreaterThan(0);
  });

  it('lets a test worker pause, resume and drop connections of a provided server', async () => {
    const server = attachServer(provided.servers.redis[0]!);
    const redis = open(server.url);
    await redis.set('attached', 'yes');
    await server.pause();
    const pending = redis.get('attached');
    expect(await settlesWithin(pending, pauseProbeMs)).toBe(false);
    await server.resume();
    expect(await pending).toBe('yes');
    const ended = nextEvent(redis, 'end');
    expect(await server.dropClientConnections()).toBeGreaterThanOrEqual(1);
    await ended;
  });

  it('lets a test worker kill a provided server, but not restart it', async () => {
    const server = attachServer(provided.servers.redis[1]!);
    await expect(server.restart()).rejects.toThrow(
      /not supported on a handle rebuilt by attachServer/,
    );
    const pid = server.pid!;
    await server.kill();
    expect(isProcessAlive(pid)).toBe(false);
    expect(await connectionError(server.host, server.port)).toBe('ECONNREFUSED');
  });
});
