// A script that uses providers and never closes them: it must exit on its own.
import diagnostics from 'node:diagnostics_channel';
import { channelNames } from '@lockkit/core';
import { createRedisLockProvider } from '../src/index.js';

const nodes = (process.env['LOCKKIT_TEST_REDIS_NODES'] ?? '').split(',');
const [a, b] = [createRedisLockProvider({ nodes }), createRedisLockProvider({ nodes })];
const name = `idle-exit-${process.pid}`;
const held = await a.createLock(name).acquire({ timeout: 5000 });
const waiting = new Promise<void>((resolve) =>
  diagnostics.subscribe(channelNames.wait, () => resolve()),
);
const next = b.createLock(name).acquire({ timeout: 5000 }); // waits (pub/sub) until released
await waiting;
await held.release();
await (await next).release();
const dead = createRedisLockProvider({ nodes: process.env['LOCKKIT_TEST_DEAD_NODE'] ?? '' });
const failed = await dead
  .createLock(name)
  .tryAcquire()
  .then(
    () => false,
    () => true,
  );
process.stdout.write(`held, handed over, released; the dead node ${failed ? 'failed' : '?'}\n`);
