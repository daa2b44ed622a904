import { type EventEmitter, once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { monotonicMs } from '../support/monotonic-clock.js';

/**
 * What this needs of an ioredis client (a Redis provider's `clients`). Duck-typed: ioredis
 * mixes the emitter in, so a client is no `instanceof EventEmitter`.
 */
type LazyClient = Pick<EventEmitter, 'once'> & {
  readonly status: string;
  connect(): Promise<void>;
};

function clientsOf(provider: object): readonly LazyClient[] {
  const { clients } = provider as { clients?: unknown };
  if (!Array.isArray(clients)) return [];
  return clients.filter(
    (client): client is LazyClient =>
      typeof client === 'object' &&
      client !== null &&
      typeof (client as Partial<LazyClient>).connect === 'function' &&
      typeof (client as Partial<LazyClient>).once === 'function' &&
      typeof (client as Partial<LazyClient>).status === 'string',
  );
}

/**
 * Connects a provider's server connections before its worker reports ready, so the run
 * starts with every worker reaching the servers. A Redis provider's clients connect lazily,
 * on their first command, which must connect and answer within the command timeout (200 ms
 * in chaos runs); behind the relays of `--faults network` or under libfaketime on a loaded
 * machine a first connect can take longer. A worker whose first attempts could not connect
 * is not waiting at the servers, yet the checker counted its writers as waiting from their
 * `acquireWrite()` call (issue 24: readers of workers already connected were granted ahead
 * of such a writer in the first second of the run). Other providers connect in their
 * factory, or have nothing to connect. Gives up after `limitMs` (the run then shows it).
 */
export async function connectProvider(provider: object, limitMs: number): Promise<void> {
  const deadline = monotonicMs() + limitMs;
  for (const client of clientsOf(provider)) {
    while (client.status !== 'ready' && monotonicMs() < deadline) {
      if (client.status === 'wait' || client.status === 'end' || client.status === 'close') {
        const failed = await client.connect().then(
          () => false,
          () => true,
        );
        if (failed) await sleep(50);
      } else {
        // Connecting already: until it is ready, fails, or the time is up.
        const signal = AbortSignal.timeout(Math.max(1, deadline - monotonicMs()));
        const emitter = client as unknown as EventEmitter;
        await Promise.race([
          once(emitter, 'ready', { signal }),
          once(emitter, 'end', { signal }),
        ]).catch(() => {});
      }
    }
  }
}
