/**
 * Child-process side of the cross-process cases: `node holder.js <module> <export> <kind>
 * <maxCount> <name>`. Acquires, prints `{"event":"acquired","fencingToken":"…"}`, waits for
 * "release" on stdin, releases, closes the provider, prints `{"event":"released","held":…}` and
 * exits — or, with LOCKKIT_HOLDER_NATURAL_EXIT=1, lets the process end by itself (it must:
 * after release() and close() nothing of the provider's may keep it alive). Kind `election`
 * campaigns in the election `name` instead: the epoch is the token, and "release" resigns.
 * With LOCKKIT_HOLDER_RESUME=stdin it prints `{"event":"ready"}`, reads a hand-over token
 * line from stdin and resumes it instead of acquiring.
 */
import type { ILockProvider, LockHandle, LockKind } from '@lockkit/core';

function say(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

async function main(): Promise<void> {
  const [moduleUrl, exportName, kind, maxCount, name] = process.argv.slice(2) as [
    string,
    string,
    LockKind | 'election',
    string,
    string,
  ];
  const loaded = (await import(moduleUrl)) as Record<
    string,
    () => ILockProvider | Promise<ILockProvider>
  >;
  const factory = loaded[exportName];
  if (typeof factory !== 'function') throw new Error(`${moduleUrl} has no export ${exportName}`);
  const provider = await factory();
  // LOCKKIT_HOLDER_RESUME=stdin: say "ready", read a hand-over token line, resume it.
  const token = process.env['LOCKKIT_HOLDER_RESUME'] === 'stdin' ? await readToken() : undefined;
  let handle: Pick<LockHandle, 'fencingToken' | 'release'>;
  if (token !== undefined && kind !== 'election') {
    if (kind === 'mutex') handle = await provider.createLock(name).resume(token);
    else if (kind === 'semaphore') {
      handle = await provider.createSemaphore(name, Number(maxCount)).resume(token);
    } else handle = await provider.createReadWriteLock(name).resume(token);
  } else if (kind === 'election') {
    const term = await provider.createElection(name).campaign();
    handle = { fencingToken: term.epoch, release: () => term.resign().then(() => true) };
  } else if (kind === 'mutex') handle = await provider.createLock(name).acquire();
  else if (kind === 'read') handle = await provider.createReadWriteLock(name).acquireRead();
  else if (kind === 'write') handle = await provider.createReadWriteLock(name).acquireWrite();
  else handle = await provider.createSemaphore(name, Number(maxCount)).acquire();
  say({ event: 'acquired', fencingToken: String(handle.fencingToken) });
  process.stdin.setEncoding('utf8');
  let input = '';
  for await (const chunk of process.stdin) {
    input += chunk;
    if (input.includes('release')) break;
  }
  const held = await handle.release();
  await provider.close();
  say({ event: 'released', held });
  if (process.env['LOCKKIT_HOLDER_NATURAL_EXIT'] === '1') return; // stdin is done: nothing left
  process.exit(0);
}

/** The first line on stdin, after telling the parent we are ready for it. */
function readToken(): Promise<string> {
  process.stdin.setEncoding('utf8');
  say({ event: 'ready' });
  return new Promise((resolve, reject) => {
    let input = '';
    const onData = (chunk: string): void => {
      input += chunk;
      const end = input.indexOf('\n');
      if (end < 0) return;
      process.stdin.off('data', onData);
      process.stdin.off('end', onEnd);
      process.stdin.pause();
      resolve(input.slice(0, end));
    };
    const onEnd = (): void => reject(new Error('stdin ended before a token came'));
    process.stdin.on('data', onData);
    process.stdin.once('end', onEnd);
  });
}

main().catch((error: unknown) => {
  say({
    event: 'error',
    message: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  process.exit(1);
});
