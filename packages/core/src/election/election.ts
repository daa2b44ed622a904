import { LockAbortedError } from '../errors/lock-aborted-error.js';
import { ProviderClosedError } from '../errors/provider-closed-error.js';
import type {
  CampaignOptions,
  ElectionEvent,
  ElectionEventsOptions,
  IDistributedLock,
  IElection,
  LeaderInfo,
  Leadership,
  LeadershipEnd,
} from '../types.js';
import {
  electionLockName,
  type ValidElectionOptions,
  validateEventsOptions,
} from './election-options.js';
import type { ElectionRegistry } from './election-registry.js';
import { LeadershipTerm } from './leadership-term.js';

/**
 * One participant of an election: campaigning is acquiring the election's mutex, a term is
 * the held handle. All election policy lives here, on the mutex every backend provides.
 */
export class Election implements IElection {
  readonly name: string;
  readonly owner: string;
  readonly #lock: IDistributedLock;
  readonly #lockName: string;
  readonly #recampaign: boolean;
  readonly #registry: ElectionRegistry;
  #term: LeadershipTerm | undefined;

  /** `lock` is the provider's mutex named `electionLockName(name)`. */
  constructor(
    name: string,
    lock: IDistributedLock,
    options: ValidElectionOptions,
    registry: ElectionRegistry,
  ) {
    this.name = name;
    this.owner = options.owner;
    this.#lock = lock;
    this.#lockName = electionLockName(name);
    this.#recampaign = options.recampaign;
    this.#registry = registry;
  }

  async campaign(options?: CampaignOptions): Promise<Leadership> {
    const handle = await this.#lock.acquire(options);
    const term = new LeadershipTerm(this.#lockName, this.owner, handle, (ended) => {
      this.#registry.delete(this.name, ended);
      if (this.#term === ended) this.#term = undefined;
    });
    if (term.end === undefined) {
      this.#term = term;
      this.#registry.add(this.name, term);
    }
    return term;
  }

  current(): Leadership | null {
    return this.#term ?? null;
  }

  leader(): Promise<LeaderInfo | null> {
    return Promise.resolve(this.#registry.leader(this.name));
  }

  events(options?: ElectionEventsOptions): AsyncIterableIterator<ElectionEvent> {
    return this.#events(validateEventsOptions(options));
  }

  async *#events(signal: AbortSignal | undefined): AsyncGenerator<ElectionEvent, void, undefined> {
    for (;;) {
      let term: LeadershipTerm;
      try {
        term = (await this.campaign(signal && { signal })) as LeadershipTerm;
      } catch (error) {
        if (endsIteration(error, signal)) return;
        throw error;
      }
      // The caller's signal resigns the term at once, also while the loop body still works
      // on it (the term's signal then aborts, which stops work that listens to it).
      const resign = (): void => void term.resign();
      signal?.addEventListener('abort', resign, { once: true });
      if (signal?.aborted) resign();
      let end: LeadershipEnd;
      try {
        yield { type: 'elected', leadership: term };
        end = await endOf(term);
        yield { type: 'lost', leadership: term, cause: end, reason: term.signal.reason };
      } finally {
        signal?.removeEventListener('abort', resign);
        await term.resign(); // a no-op unless the loop was left while the term lasted
      }
      if (!this.#recampaign || end !== 'lock-lost' || signal?.aborted) return;
    }
  }
}

/** A campaign that failed because the caller or the provider ended the iteration. */
function endsIteration(error: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted && error === signal.reason) return true;
  return LockAbortedError.isInstance(error) || ProviderClosedError.isInstance(error);
}

/** Resolves with why `term` ended, once it has. */
function endOf(term: LeadershipTerm): Promise<LeadershipEnd> {
  return new Promise((resolve) => {
    const ended = (): void => resolve(term.end as LeadershipEnd);
    if (term.signal.aborted) ended();
    else term.signal.addEventListener('abort', ended, { once: true });
  });
}
