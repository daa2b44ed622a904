import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** One running instance of the built service (`node dist/main.js`), configured by `env`. */
export class ServiceInstance {
  readonly #process: ChildProcessWithoutNullStreams;
  readonly #exited: Promise<unknown>;
  #output = '';

  private constructor(env: Readonly<Record<string, string>>) {
    this.#process = spawn(process.execPath, [main], {
      env: { ...process.env, ...env, PORT: '0' },
      stdio: 'pipe',
    });
    this.#process.stdout.setEncoding('utf8');
    this.#process.stderr.setEncoding('utf8');
    this.#process.stderr.on('data', (chunk: string) => {
      this.#output += chunk;
    });
    this.#exited = once(this.#process, 'exit');
  }

  /** Starts an instance and resolves with its base URL once it listens. */
  static async start(env: Readonly<Record<string, string>>): Promise<[ServiceInstance, string]> {
    const instance = new ServiceInstance(env);
    const port = await new Promise<number>((resolve, reject) => {
      let buffered = '';
      instance.#process.stdout.on('data', (chunk: string) => {
        buffered += chunk;
        const match = /\{"listening":(\d+)\}/.exec(buffered);
        if (match) resolve(Number(match[1]));
      });
      void instance.#exited.then(() =>
        reject(new Error(`the service exited before listening:\n${instance.#output}`)),
      );
    });
    return [instance, `http://127.0.0.1:${port}`];
  }

  /** SIGTERM (the service closes its lock provider on shutdown), then waits for the exit. */
  async stop(): Promise<string> {
    this.#process.kill('SIGTERM');
    await this.#exited;
    return this.#output;
  }
}
