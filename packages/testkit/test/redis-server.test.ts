import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerHandle, ServerStartError, startRedisServers } from '../src/index.js';
import { isProcessAlive } from '../src/process-tree.js';
import { connectionError, nextEvent, pauseProbeMs, settlesWithin } from './support.js';

function client(url: string): Redis {
  const redis = new Redis(url, { retryStrategy: () => null, maxRetriesPerRequest: 0 });
  redis.on('error', () => {
    // Connection errors are what several tests provoke; they assert on events instead.
  });
  return redis;
}

describe('startRedisServers', () => {
  let servers: ServerHandle[] = [];
  const clients: Redis[] = [];
  const open = (url: string): Redis => {
    const redis = client(url);
    clients.push(redis);
    return redis;
  };

  beforeAll(async () => {
    servers = await startRedisServers(3, { useEnvironment: false });
  });

  afterAll(async () => {
    for (const redis of clients) redis.disconnect();
    await Promise.all(servers.map((server) => server.stop()));
  });

  it('starts independent servers on distinct free ports', async () => {
    const [first, second] = servers;
    expect(new Set(servers.map((server) => server.port)).size).toBe(3);
    expect(first?.url).toBe(`redis://127.0.0.1:${first?.port}`);
    expect(first?.controllable).toBe(true);
    await open(first!.url).set('key', 'first');
    expect(await open(first!.url).get('key')).toBe('first');
    expect(await open(second!.url).get('key')).toBeNull();
  });

  it('pause() holds requests until resume()', async () => {
    const server = servers[0]!;
    const redis = open(server.url);
    await redis.set('paused', 'value');
    await server.pause();
    const pending = redis.get('paused');
    expect(await settlesWithin(pending, pauseProbeMs)).toBe(false);
    await server.resume();
    expect(await pending).toBe('value');
  });

  it('dropClientConnections() closes connected clients', async () => {
    const server = servers[1]!;
    const redis = open(server.url);
    await redis.ping();
    const ended = nextEvent(redis, 'end');
    expect(await server.dropClientConnections()).toBeGreaterThanOrEqual(1);
    await ended;
    expect(redis.status).toBe('end');
  });

  it('kill() makes connections fail and restart() brings it back on the same port', async () => {
    const server = servers[2]!;
    const { port, pid } = server;
    await server.kill();
    expect(isProcessAlive(pid!)).toBe(false);
    expect(await connectionError(server.host, port)).toBe('ECONNREFUSED');
    await server.restart();
    expect(server.port).toBe(port);
    expect(server.pid).not.toBe(pid);
    expect(await open(server.url).ping()).toBe('PONG');
  });

  it('restart() of a running server stops it gracefully first', async () => {
    const server = servers[2]!;
    const pid = server.pid;
    await server.restart();
    expect(isProcessAlive(pid!)).toBe(false);
    expect(await open(server.url).ping()).toBe('PONG');
  });

  it('a server that cannot start fails at once, with the tail of its log', async () => {
    const start = startRedisServers(1, { useEnvironment: false, extraArguments: ['--no-such'] });
    const error: Error = await start.then(
      () => {
        throw new Error('started');
      },
      (reason: Error) => reason,
    );
    expect(error).toBeInstanceOf(ServerStartError);
    expect(error.message).toMatch(/exited with exit code 1 before it was ready/);
    expect(error.message).toMatch(/\| .*Bad directive or wrong number of arguments/);
    const logPath = /Last lines of (\S+):/.exec(error.message)?.[1];
    expect(existsSync(dirname(logPath!))).toBe(false);
  });

  it('stop() ends the process and removes the temporary directory', async () => {
    const server = servers[0]!;
    const { pid, temporaryDirectory } = server.describe();
    expect(existsSync(temporaryDirectory!)).toBe(true);
    await server.stop();
    expect(isProcessAlive(pid!)).toBe(false);
    expect(existsSync(temporaryDirectory!)).toBe(false);
    expect(server.pid).toBeUndefined();
    await expect(server.pause()).rejects.toThrow(/after stop\(\)/);
  });
});
