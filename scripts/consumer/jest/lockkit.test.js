// Jest (CommonJS, Node 20, no ESM flags): lockkit and a backend load with require(), and
// the error classes a test imports match the errors the packages throw.
const {
  createLockProvider,
  InvalidArgumentError,
  LockError,
  LockTimeoutError,
} = require('lockkit');
const { createRedisLockProvider } = require('@lockkit/redis');
const { createPostgresLockProvider } = require('@lockkit/postgres');

const env = JSON.parse(process.env.LOCKKIT_CONSUMER_SERVERS);

test('a memory lock through createLockProvider', async () => {
  const locks = await createLockProvider('memory:');
  const handle = await locks.createLock('a').acquire();
  await expect(locks.createLock('a').acquire({ timeout: 20 })).rejects.toBeInstanceOf(
    LockTimeoutError,
  );
  expect(await handle.release()).toBe(true);
  await locks.close();
});

test('bad input is an InvalidArgumentError before any I/O', async () => {
  await expect(createLockProvider('nosuch://x')).rejects.toBeInstanceOf(InvalidArgumentError);
});

test.each([
  ['redis', () => createRedisLockProvider({ nodes: env.redisUrls[0] })],
  ['postgres', () => createPostgresLockProvider({ connection: env.postgresUrl })],
])('a %s mutex excludes and hands over with a larger fencing token', async (_name, open) => {
  const [a, b] = [open(), open()];
  try {
    const first = await a.createLock('jest').acquire({ timeout: 10_000 });
    const error = await b
      .createLock('jest')
      .acquire({ timeout: 50 })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toBeInstanceOf(LockError);
    expect(error.code).toBe('LOCK_TIMEOUT');
    expect(await first.release()).toBe(true);
    const second = await b.createLock('jest').acquire({ timeout: 10_000 });
    expect(second.fencingToken > first.fencingToken).toBe(true);
    expect(await second.release()).toBe(true);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});
