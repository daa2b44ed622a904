/**
 * A waiting writer's intent marker (`w.<marker>` in an RW key directory): new readers stay out
 * while one is live, so a writer still waiting for the gate (held by another writer, or by a
 * dead holder whose lease has not run out) goes before readers that came after it. Created
 * once the writer waits (never for a single try), refreshed every `leaseMs / 3` like a
 * reader's marker, and claimed when the wait ends, however it ends. A crashed writer's intent
 * goes stale after `leaseMs` and is claimed by the next census, like any holder marker.
 *
 * @module
 */
import type { FileLockContext } from './file-lock-context.js';
import { addMember } from './gated-locks.js';
import { claimMarker, touchMarker } from './holder-markers.js';
import { WRITER_PREFIX } from './lock-paths.js';

export class WriterIntent {
  readonly #context: FileLockContext;
  readonly #keyDir: string;
  #marker: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #ended = false;

  constructor(context: FileLockContext, keyDir: string) {
    this.#context = context;
    this.#keyDir = keyDir;
  }

  /** Our marker (at process exit), if any. */
  get marker(): string | undefined {
    return this.#marker;
  }

  /** Makes sure our intent marker is in place and refreshed (a no-op once the wait ended). */
  async announce(): Promise<void> {
    if (this.#ended || this.#marker !== undefined) return;
    const { marker } = await addMember(this.#context, this.#keyDir, WRITER_PREFIX);
    if (this.#ended) {
      await claimMarker(this.#context, marker); // the wait ended meanwhile
      return;
    }
    this.#marker = marker;
    const every = this.#context.staleness.leaseMs / 3;
    this.#timer = setInterval(() => void this.#refresh(), every);
    this.#timer.unref();
  }

  /** The wait ended: claims our marker (after any announce in flight has settled). */
  async withdraw(): Promise<void> {
    this.#ended = true;
    clearInterval(this.#timer);
    const marker = this.#marker;
    this.#marker = undefined;
    if (marker !== undefined) await claimMarker(this.#context, marker);
  }

  async #refresh(): Promise<void> {
    const marker = this.#marker;
    if (marker === undefined) return;
    // Claimed as stale (this process stalled past the lease): announce again next attempt.
    const kept = await touchMarker(this.#context, marker).catch(() => true);
    if (!kept && this.#marker === marker) {
      clearInterval(this.#timer);
      this.#marker = undefined;
    }
  }
}
