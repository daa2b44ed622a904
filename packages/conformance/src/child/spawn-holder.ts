import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ChildProviderSpec } from '../options.js';
import type { LockSpec } from '../support.js';

/** What a child holds: a lock, or the leadership of an election (its epoch is the token). */
export type HolderSpec = LockSpec | { readonly kind: 'election'; readonly maxCount: 1 };

/** A lock held by a child process. */
export interface ChildHolder {
  readonly pid: number;
  readonly fencingToken: bigint;
  /** Asks the child to release; resolves what its `release()` returned. */
  release(): Promise<boolean>;
  /** SIGKILLs the child (no cleanup of any kind) and waits for it to exit. */
  kill(): Promise<void>;
  /**
   * With `naturalExit`: whether the child, after `release()` (which also closed its provider),
   * exited by itself within `timeoutMs` (it is SIGKILLed otherwise).
   */
  exitsWithin(timeoutMs: number): Promise<boolean>;
}

interface ChildMessage {
  readonly event?: string;
  readonly fencingToken?: string;
  readonly message?: string;
  readonly held?: boolean;
}

const holderScript = new URL(
  import.meta.url.endsWith('.ts') ? './holder.ts' : './holder.js',
  import.meta.url,
);

/**
 * Starts a child process that acquires `name` with `spec` through `child`'s provider (or, with
 * `resume`, resumes the hand-over token it returns, called once the child is ready for it).
 */
export async function spawnHolder(
  child: ChildProviderSpec,
  name: string,
  spec: HolderSpec,
  timeoutMs: number,
  options: { readonly naturalExit?: boolean; readonly resume?: () => string } = {},
): Promise<ChildHolder> {
  const moduleUrl = child.module.startsWith('file:')
    ? child.module
    : pathToFileURL(child.module).href;
  const usesTs = moduleUrl.endsWith('.ts') || holderScript.href.endsWith('.ts');
  const execArgv = child.execArgv ?? (usesTs ? ['--import', 'tsx'] : []);
  const process_ = spawn(
    process.execPath,
    [
      ...execArgv,
      fileURLToPath(holderScript),
      moduleUrl,
      child.exportName ?? 'createProvider',
      spec.kind,
      String(spec.maxCount),
      name,
    ],
    {
      env: {
        ...process.env,
        ...child.env,
        ...(options.naturalExit && { LOCKKIT_HOLDER_NATURAL_EXIT: '1' }),
        ...(options.resume && { LOCKKIT_HOLDER_RESUME: 'stdin' }),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  process_.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines = createInterface({ input: process_.stdout! });
  const messages: ChildMessage[] = [];
  const waiters: ((message: ChildMessage) => void)[] = [];
  lines.on('line', (line) => {
    let message: ChildMessage;
    try {
      message = JSON.parse(line) as ChildMessage;
    } catch {
      return; // not ours (a backend logging to stdout)
    }
    const waiter = waiters.shift();
    if (waiter) waiter(message);
    else messages.push(message);
  });
  const exited = once(process_, 'exit');
  const next = (): Promise<ChildMessage> =>
    new Promise((resolve, reject) => {
      const queued = messages.shift();
      if (queued) return resolve(queued);
      const timer = setTimeout(
        () =>
          reject(
            new Error(`child holder did not answer within ${timeoutMs} ms. stderr:\n${stderr}`),
          ),
        timeoutMs,
      );
      exited.then(
        () => {
          clearTimeout(timer);
          reject(new Error(`child holder exited (code ${process_.exitCode}). stderr:\n${stderr}`));
        },
        () => {},
      );
      waiters.push((message) => {
        clearTimeout(timer);
        resolve(message);
      });
    });
  const kill = async (): Promise<void> => {
    if (process_.exitCode !== null || process_.signalCode !== null) return;
    process_.kill('SIGKILL');
    await exited;
  };
  const first = await next()
    .then((message) => {
      if (message.event !== 'ready' || !options.resume) return message;
      process_.stdin?.write(`${options.resume()}\n`); // the token, once the child is up
      return next();
    })
    .catch(async (error: unknown) => {
      await kill();
      throw error;
    });
  if (first.event !== 'acquired') {
    await kill();
    throw new Error(`child holder failed: ${String(first.message ?? JSON.stringify(first))}`);
  }
  const exitsWithin = async (ms: number): Promise<boolean> => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    const exitedAlone = await Promise.race([exited.then(() => true as const), timedOut]);
    clearTimeout(timer);
    if (!exitedAlone) await kill();
    return exitedAlone;
  };
  const holder = holderOf(process_, BigInt(String(first.fencingToken)), next, kill);
  return options.naturalExit
    ? { ...holder, release: () => releaseOnly(process_, next), exitsWithin }
    : { ...holder, exitsWithin };
}

/** Asks the child to release and close, and leaves it running (it should end by itself). */
async function releaseOnly(
  child: ChildProcess,
  next: () => Promise<ChildMessage>,
): Promise<boolean> {
  child.stdin?.end('release\n');
  const message = await next();
  if (message.event !== 'released')
    throw new Error(`child holder failed: ${String(message.message)}`);
  return message.held === true;
}

function holderOf(
  child: ChildProcess,
  fencingToken: bigint,
  next: () => Promise<ChildMessage>,
  kill: () => Promise<void>,
): Omit<ChildHolder, 'exitsWithin'> {
  return {
    pid: child.pid!,
    fencingToken,
    async release() {
      child.stdin?.write('release\n');
      const message = await next();
      if (message.event !== 'released')
        throw new Error(`child holder failed: ${String(message.message)}`);
      await kill().catch(() => {});
      return message.held === true;
    },
    kill,
  };
}
