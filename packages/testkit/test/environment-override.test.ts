import { afterEach, describe, expect, it } from 'vitest';
import {
  attachServer,
  startMariaDb,
  startPostgres,
  startRedisServers,
  startZooKeeper,
} from '../src/index.js';

const variables = [
  'LOCKKIT_REDIS_URLS',
  'LOCKKIT_POSTGRES_URL',
  'LOCKKIT_MYSQL_URL',
  'LOCKKIT_ZOOKEEPER_URL',
] as const;
const saved = new Map(variables.map((name) => [name, process.env[name]]));

afterEach(() => {
  for (const [name, value] of saved) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('LOCKKIT_* environment variables', () => {
  it('give non-controllable handles whose fault hooks reject with the reason', async () => {
    process.env['LOCKKIT_POSTGRES_URL'] = 'postgres://someone@db.example:6543/app';
    const server = await startPostgres();
    expect(server).toMatchObject({
      kind: 'postgres',
      controllable: false,
      host: 'db.example',
      port: 6543,
      url: 'postgres://someone@db.example:6543/app',
      pid: undefined,
    });
    await expect(server.pause()).rejects.toThrow(
      /Cannot pause\(\) the postgres server .* given through LOCKKIT_POSTGRES_URL.*controllable is false/,
    );
    await expect(server.kill()).rejects.toThrow(/LOCKKIT_POSTGRES_URL/);
    await expect(server.dropClientConnections()).rejects.toThrow(/LOCKKIT_POSTGRES_URL/);
    await expect(server.restart()).rejects.toThrow(/LOCKKIT_POSTGRES_URL/);
    await server.stop();
  });

  it('cover every kind, with default ports', async () => {
    process.env['LOCKKIT_REDIS_URLS'] = 'redis://a:7001, redis://b:7002,redis://c';
    process.env['LOCKKIT_MYSQL_URL'] = 'mysql://root@127.0.0.1/test';
    process.env['LOCKKIT_ZOOKEEPER_URL'] = 'zookeeper://zk.example:2182';
    const redis = await startRedisServers(3);
    expect(redis.map((server) => `${server.host}:${server.port}`)).toEqual([
      'a:7001',
      'b:7002',
      'c:6379',
    ]);
    expect((await startMariaDb()).port).toBe(3306);
    expect((await startZooKeeper()).url).toBe('zookeeper://zk.example:2182');
    await expect(startRedisServers(5)).rejects.toThrow(/LOCKKIT_REDIS_URLS lists 3 server/);
  });

  it('survive the trip through provide/inject: attachServer keeps them non-controllable', async () => {
    process.env['LOCKKIT_ZOOKEEPER_URL'] = 'zookeeper://zk.example:2182';
    const info = JSON.parse(JSON.stringify((await startZooKeeper()).describe()));
    const attached = attachServer(info);
    expect(attached.controllable).toBe(false);
    await expect(attached.resume()).rejects.toThrow(/LOCKKIT_ZOOKEEPER_URL/);
  });

  it('are ignored with useEnvironment: false', async () => {
    process.env['LOCKKIT_REDIS_URLS'] = 'redis://a:7001';
    const [server] = await startRedisServers(1, { useEnvironment: false });
    try {
      expect(server?.controllable).toBe(true);
      expect(server?.host).toBe('127.0.0.1');
    } finally {
      await server?.stop();
    }
  });
});
