import { existsSync } from 'node:fs';
import { type Client, CreateMode, createClient } from 'node-zookeeper-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerHandle, startZooKeeper } from '../src/index.js';
import { isProcessAlive } from '../src/process-tree.js';
import { connectionError, nextEvent, pauseProbeMs, settlesWithin } from './support.js';

function create(client: Client, path: string, mode: number): Promise<string> {
  return new Promise((resolve, reject) => {
    client.create(path, Buffer.from(path), mode, (error, created) =>
      error ? reject(error) : resolve(created),
    );
  });
}

function getData(client: Client, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    client.getData(path, (error, data) => (error ? reject(error) : resolve(data.toString())));
  });
}

describe('startZooKeeper', () => {
  let server: ServerHandle;
  const clients: Client[] = [];
  const open = async (sessionTimeoutMs = 10_000): Promise<Client> => {
    const client = createClient(`${server.host}:${server.port}`, {
      sessionTimeout: sessionTimeoutMs,
      spinDelay: 50,
    });
    clients.push(client);
    const connected = nextEvent(client, 'connected');
    client.connect();
    await connected;
    return client;
  };

  beforeAll(async () => {
    server = await startZooKeeper({ useEnvironment: false });
  });

  afterAll(async () => {
    for (const client of clients) client.close();
    await server.stop();
  });

  it('serves requests with a short tickTime (400 ms minimum session timeout)', async () => {
    expect(server.url).toBe(`zookeeper://127.0.0.1:${server.port}`);
    const client = await open(100);
    expect(client.getSessionTimeout()).toBe(400);
    await create(client, '/kept', CreateMode.PERSISTENT);
    expect(await getData(client, '/kept')).toBe('/kept');
  });

  it('pause() holds requests until resume()', async () => {
    const client = await open();
    await server.pause();
    const pending = getData(client, '/kept');
    expect(await settlesWithin(pending, pauseProbeMs)).toBe(false);
    await server.resume();
    expect(await pending).toBe('/kept');
  });

  it('dropClientConnections() closes sessions: the client sees its session expire', async () => {
    const client = await open();
    await create(client, '/ephemeral', CreateMode.EPHEMERAL);
    const expired = nextEvent(client, 'expired');
    expect(await server.dropClientConnections()).toBeGreaterThanOrEqual(1);
    await expired;
    const observer = await open();
    await expect(getData(observer, '/ephemeral')).rejects.toThrow(/NO_NODE/);
  });

  it('kill() makes connections fail; restart() keeps port and data', async () => {
    const { port, pid } = server;
    await server.kill();
    expect(isProcessAlive(pid!)).toBe(false);
    expect(await connectionError(server.host, port)).toBe('ECONNREFUSED');
    await server.restart();
    expect(server.port).toBe(port);
    expect(await getData(await open(), '/kept')).toBe('/kept');
  });

  it('stop() ends the process and removes the temporary directory', async () => {
    const { pid, temporaryDirectory } = server.describe();
    await server.stop();
    expect(isProcessAlive(pid!)).toBe(false);
    expect(existsSync(temporaryDirectory!)).toBe(false);
  });
});
