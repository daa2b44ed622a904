import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/** The built binary, as users run it. */
export const lockkitBin: string = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
const childScript = fileURLToPath(new URL('./fixtures/child.mjs', import.meta.url));

/** Adds query parameters to a lock URL that may already have some. */
export function withQuery(url: string, query: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}${query}`;
}

/** `-- node fixtures/child.mjs <words…>`: the test command, after lockkit's options. */
export function childCommand(...words: string[]): string[] {
  return ['--', process.execPath, childScript, ...words];
}

/** What the test command printed in its `ready` line. */
export interface Ready {
  readonly pid: number;
  readonly token: string | null;
  readonly name: string | null;
  readonly kind: string | null;
  readonly backend: string | null;
  /** `lockkit elect`: the term's epoch, the election name and the owner label. */
  readonly epoch: string | null;
  readonly election: string | null;
  readonly owner: string | null;
  /** `Date.now()` when the command started. */
  readonly at: number;
}

/** How a process ended. */
export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A running `lockkit` process with its output collected. */
export class LockkitProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<Exit>;
  stdout = '';
  stderr = '';
  readonly #listeners = new Set<() => void>();

  /** `env` is added to the test's environment, from which `LOCKKIT_URL` is dropped. */
  constructor(args: readonly string[], env: Readonly<Record<string, string>> = {}) {
    const { LOCKKIT_URL: _dropped, ...inherited } = process.env;
    this.child = spawn(process.execPath, [lockkitBin, ...args], {
      stdio: 'pipe',
      env: { ...inherited, ...env },
    });
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.stdout += chunk;
      for (const listener of this.#listeners) listener();
    });
    this.child.stderr.on('data', (chunk: string) => {
      this.stderr += chunk;
      for (const listener of this.#listeners) listener();
    });
    this.exited = once(this.child, 'close').then(([code, signal]) => ({
      code: code as number | null,
      signal: signal as NodeJS.Signals | null,
    }));
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Resolves with the first match of `pattern` in the stream; rejects if lockkit exits first. */
  waitFor(stream: 'stdout' | 'stderr', pattern: RegExp): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const match = this[stream].match(pattern);
        if (!match) return false;
        this.#listeners.delete(listener);
        resolve(match);
        return true;
      };
      const listener = (): void => {
        check();
      };
      if (check()) return;
      this.#listeners.add(listener);
      void this.exited.then((exit) => {
        if (check()) return;
        this.#listeners.delete(listener);
        reject(
          new Error(
            `lockkit exited (${JSON.stringify(exit)}) before ${stream} matched ${pattern}\n` +
              `stdout: ${this.stdout}\nstderr: ${this.stderr}`,
          ),
        );
      });
    });
  }

  /** The test command's `ready` line. */
  async ready(): Promise<Ready> {
    const [, json = '{}'] = await this.waitFor('stdout', /ready (\{.*\})\n/);
    return JSON.parse(json) as Ready;
  }

  /** The `n`th (from 1) `ready` line: a command `lockkit elect` started in a later term. */
  async nthReady(n: number): Promise<Ready> {
    const earlier = String.raw`(?:ready \{.*\}\n[\s\S]*?)`;
    const pattern = new RegExp(`${earlier}{${n - 1}}ready (\\{.*\\})\\n`);
    const [, json = '{}'] = await this.waitFor('stdout', pattern);
    return JSON.parse(json) as Ready;
  }

  /** When the test command finished after its stdin ended (`Date.now()`). */
  async bye(): Promise<number> {
    const [, json = '{}'] = await this.waitFor('stdout', /bye (\{.*\})\n/);
    return (JSON.parse(json) as { at: number }).at;
  }

  /** Ends stdin, which the test command reads: it then exits 0. */
  finish(): void {
    this.child.stdin.end();
  }
}

/** What a finished lockkit printed, and how it ended. */
export type Finished = Exit & { readonly stdout: string; readonly stderr: string };

/** Runs lockkit to completion (stdin closed at once). */
export function lockkit(...args: string[]): Promise<Finished> {
  return lockkitWith({}, ...args);
}

/** Runs lockkit to completion with `env` added to its environment. */
export async function lockkitWith(
  env: Readonly<Record<string, string>>,
  ...args: string[]
): Promise<Finished> {
  const process = new LockkitProcess(args, env);
  process.finish();
  const exit = await process.exited;
  return { ...exit, stdout: process.stdout, stderr: process.stderr };
}
