import { describeLogTail } from './log-tail.js';
import type { ManagedProcess } from './managed-process.js';

/** Log lines that mean the server could not bind its port. */
const addressInUsePattern = /address already in use|EADDRINUSE|BindException/i;

/** Thrown when a server does not become ready; the message ends with the tail of its log. */
export class ServerStartError extends Error {
  /** Whether the log says the port was taken (the start is then retried on another port). */
  readonly addressInUse: boolean;

  constructor(message: string, logPath: string, options?: ErrorOptions) {
    const tail = describeLogTail(logPath);
    super(`${message}\n${tail}`, options);
    this.name = 'ServerStartError';
    this.addressInUse = addressInUsePattern.test(tail);
  }
}

/** What {@link waitUntilReady} needs. */
export interface ReadinessOptions {
  /** Human name used in errors, e.g. `redis-server on 127.0.0.1:40123`. */
  readonly description: string;
  readonly process: ManagedProcess;
  /** One readiness probe; rejects while the server is not ready (or is not ours). */
  readonly check: () => Promise<void>;
  readonly logPath: string;
  /** Overall deadline. */
  readonly timeoutMs: number;
  /** Pause between failed probes. */
  readonly pollIntervalMs?: number;
}

/**
 * Polls `check` until it succeeds, failing early if the process exits and failing with the
 * log's tail when `timeoutMs` runs out. Never a fixed sleep.
 */
export async function waitUntilReady(options: ReadinessOptions): Promise<void> {
  const pollIntervalMs = options.pollIntervalMs ?? 50;
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    const exit = options.process.exitStatus;
    if (exit !== undefined) {
      const how = exit.signal === null ? `exit code ${exit.code}` : `signal ${exit.signal}`;
      throw new ServerStartError(
        `${options.description} exited with ${how} before it was ready.`,
        options.logPath,
      );
    }
    try {
      await options.check();
      if (options.process.exitStatus === undefined) return;
      continue;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const reason = lastError instanceof Error ? lastError.message : String(lastError);
      throw new ServerStartError(
        `${options.description} was not ready within ${options.timeoutMs} ms (last probe: ${reason}).`,
        options.logPath,
        { cause: lastError },
      );
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise((resolve) => {
        timer = setTimeout(resolve, pollIntervalMs);
      }),
      options.process.exited,
    ]);
    clearTimeout(timer);
  }
}
