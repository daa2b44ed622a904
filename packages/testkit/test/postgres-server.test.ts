import { existsSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerHandle, startPostgres } from '../src/index.js';
import { isProcessAlive, listDescendants } from '../src/process-tree.js';
import { connectionError, nextEvent, pauseProbeMs, settlesWithin } from './support.js';

describe('startPostgres', () => {
  let server: ServerHandle;
  const clients: pg.Client[] = [];
  const open = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: server.url });
    client.on('error', () => {
      // Terminated connections are what several tests provoke.
    });
    clients.push(client);
    await client.connect();
    return client;
  };

  beforeAll(async () => {
    server = await startPostgres({ useEnvironment: false });
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
    await server.stop();
  });

  it('serves queries as postgres://postgres@127.0.0.1:PORT/postgres', async () => {
    expect(server.url).toBe(`postgres://postgres@127.0.0.1:${server.port}/postgres`);
    const client = await open();
    await client.query('CREATE TABLE kept (value text)');
    await client.query("INSERT INTO kept VALUES ('survives')");
    const result = await client.query<{ answer: number }>('SELECT 1 AS answer');
    expect(result.rows).toEqual([{ answer: 1 }]);
  });

  it('pause() freezes the postmaster and its backends until resume()', async () => {
    const client = await open();
    await server.pause();
    const pending = client.query('SELECT 2 AS answer');
    expect(await settlesWithin(pending, pauseProbeMs)).toBe(false);
    await server.resume();
    expect((await pending).rows).toEqual([{ answer: 2 }]);
  });

  it('dropClientConnections() terminates client backends', async () => {
    const client = await open();
    const ended = nextEvent(client, 'end');
    expect(await server.dropClientConnections()).toBeGreaterThanOrEqual(1);
    await ended;
    await expect(client.query('SELECT 1')).rejects.toThrow();
  });

  it('kill() ends every server process; restart() keeps port and data', async () => {
    const { port, pid } = server;
    const tree = [pid!, ...listDescendants(pid!)];
    expect(tree.length).toBeGreaterThan(1);
    await server.kill();
    expect(tree.filter(isProcessAlive)).toEqual([]);
    expect(await connectionError(server.host, port)).toBe('ECONNREFUSED');
    await server.restart();
    expect(server.port).toBe(port);
    const client = await open();
    const result = await client.query<{ value: string }>('SELECT value FROM kept');
    expect(result.rows).toEqual([{ value: 'survives' }]);
  });

  it('stop() ends the process and removes the temporary directory', async () => {
    const { pid, temporaryDirectory } = server.describe();
    await server.stop();
    expect(isProcessAlive(pid!)).toBe(false);
    expect(existsSync(temporaryDirectory!)).toBe(false);
  });
});
