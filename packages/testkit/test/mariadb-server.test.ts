import { existsSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerHandle, startMariaDb } from '../src/index.js';
import { isProcessAlive } from '../src/process-tree.js';
import { connectionError, nextEvent, pauseProbeMs, settlesWithin } from './support.js';

describe('startMariaDb', () => {
  let server: ServerHandle;
  const connections: mysql.Connection[] = [];
  const open = async (): Promise<mysql.Connection> => {
    const connection = await mysql.createConnection(server.url);
    connection.on('error', () => {
      // Killed connections are what several tests provoke.
    });
    connections.push(connection);
    return connection;
  };

  beforeAll(async () => {
    server = await startMariaDb({ useEnvironment: false });
  });

  afterAll(async () => {
    for (const connection of connections) connection.destroy();
    await server.stop();
  });

  it('serves queries as mysql://root@127.0.0.1:PORT/test', async () => {
    expect(server.url).toBe(`mysql://root@127.0.0.1:${server.port}/test`);
    const connection = await open();
    await connection.query('CREATE TABLE kept (value VARCHAR(20)) ENGINE=InnoDB');
    await connection.query("INSERT INTO kept VALUES ('survives')");
    const [rows] = await connection.query('SELECT DATABASE() AS name, 1 AS answer');
    expect(rows).toEqual([{ name: 'test', answer: 1 }]);
  });

  it('pause() holds queries until resume()', async () => {
    const connection = await open();
    await server.pause();
    const pending = connection.query('SELECT 2 AS answer');
    expect(await settlesWithin(pending, pauseProbeMs)).toBe(false);
    await server.resume();
    expect((await pending)[0]).toEqual([{ answer: 2 }]);
  });

  it('dropClientConnections() kills client connections', async () => {
    const connection = await open();
    const lost = nextEvent(connection, 'error');
    expect(await server.dropClientConnections()).toBeGreaterThanOrEqual(1);
    const [error] = await lost;
    expect((error as { fatal?: boolean }).fatal).toBe(true);
    await expect(connection.query('SELECT 1')).rejects.toThrow();
  });

  it('kill() makes connections fail; restart() keeps port and data', async () => {
    const { port, pid } = server;
    await server.kill();
    expect(isProcessAlive(pid!)).toBe(false);
    expect(await connectionError(server.host, port)).toBe('ECONNREFUSED');
    await server.restart();
    expect(server.port).toBe(port);
    const [rows] = await (await open()).query('SELECT value FROM kept');
    expect(rows).toEqual([{ value: 'survives' }]);
  });

  it('stop() ends the process and removes the temporary directory', async () => {
    const { pid, temporaryDirectory } = server.describe();
    await server.stop();
    expect(isProcessAlive(pid!)).toBe(false);
    expect(existsSync(temporaryDirectory!)).toBe(false);
  });
});
