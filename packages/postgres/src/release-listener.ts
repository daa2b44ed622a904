import { BackendUnavailableError } from '@lockkit/core';
import { type ReleaseWatch, settleWithin, Wakeup } from '@lockkit/core/backend';
import type pg from 'pg';
import type { ConnectionSource, OpenedClient } from './connection-source.js';
import { describeError } from './pg-errors.js';

interface Channel {
  readonly wakeups: Set<Wakeup>;
  /** Settles once LISTEN for this channel is in effect on the current session. */
  listening: Promise<void>;
}

interface ListenerSession {
  readonly opened: OpenedClient;
  readonly onNotification: (message: pg.Notification) => void;
  readonly onFailure: (error?: Error) => void;
  tail: Promise<unknown>;
  /** Statements in flight (the socket keeps the process alive only meanwhile). */
  busy: number;
}

function noop(): void {}

/**
 * Semaphore wake-ups: one session per provider LISTENs on the channels of the semaphores
 * someone waits for; a release NOTIFYs its semaphore's channel and every watch on it wakes
 * (then core retries the attempt). If the session fails, every watcher is woken (so it
 * retries at once) and the next watch opens a new session that listens on all channels
 * again; in between, core's safety poll covers the gap.
 */
export class ReleaseListener {
  readonly #source: ConnectionSource;
  readonly #idleTimeoutMs: number;
  readonly #answerTimeoutMs: number;
  readonly #channels = new Map<string, Channel>();
  #session: Promise<ListenerSession> | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #closed = false;

  /** `answerTimeoutMs`: a LISTEN/UNLISTEN not answered this fast fails the session. */
  constructor(source: ConnectionSource, idleTimeoutMs: number, answerTimeoutMs: number) {
    this.#source = source;
    this.#idleTimeoutMs = idleTimeoutMs;
    this.#answerTimeoutMs = answerTimeoutMs;
  }

  /** Subscribes to `channel`; resolves once LISTEN is in effect (subscribe-then-retry). */
  async watch(channel: string): Promise<ReleaseWatch> {
    if (this.#closed) throw new BackendUnavailableError('The PostgreSQL lock provider is closed');
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    const wakeup = new Wakeup(() => this.#unwatch(channel, wakeup));
    let entry = this.#channels.get(channel);
    if (!entry) {
      entry = { wakeups: new Set(), listening: Promise.resolve() };
      this.#channels.set(channel, entry);
      entry.listening = this.#run(`LISTEN ${channel}`);
    }
    entry.wakeups.add(wakeup);
    try {
      await entry.listening;
    } catch (error) {
      wakeup.close();
      throw new BackendUnavailableError(
        `Could not LISTEN for semaphore releases: ${describeError(error)}`,
        { cause: error },
      );
    }
    return { next: (signal) => wakeup.next(signal), close: () => wakeup.close() };
  }

  /** Closes the listening session. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#idleTimer);
    this.#wakeAll();
    this.#channels.clear();
    const session = this.#session;
    this.#session = undefined;
    if (session) await session.then((live) => this.#end(live, false), noop);
  }

  #unwatch(channel: string, wakeup: Wakeup): void {
    const entry = this.#channels.get(channel);
    if (!entry?.wakeups.delete(wakeup) || entry.wakeups.size > 0) return;
    this.#channels.delete(channel);
    if (this.#session) void this.#run(`UNLISTEN ${channel}`).catch(noop);
    if (this.#channels.size === 0 && !this.#closed) {
      this.#idleTimer = setTimeout(() => {
        this.#idleTimer = undefined;
        const session = this.#session;
        if (this.#channels.size > 0 || !session) return;
        this.#session = undefined;
        void session.then((live) => this.#end(live, false), noop);
      }, this.#idleTimeoutMs);
      this.#idleTimer.unref();
    }
  }

  /** Runs `text` on the session (opening it, and listening on every channel, if needed). */
  async #run(text: string): Promise<void> {
    if (!this.#session) {
      const opening = this.#open();
      this.#session = opening;
      opening.catch(() => {
        if (this.#session === opening) this.#session = undefined;
      });
    }
    const session = await this.#session;
    const run = session.tail.then(() => this.#query(session, text));
    session.tail = run.catch(noop);
    await run;
  }

  /** Runs `text`; a server that does not answer in time fails the session. */
  async #query(session: ListenerSession, text: string): Promise<void> {
    if (session.busy++ === 0) session.opened.keepProcessAlive(true);
    try {
      await settleWithin(session.opened.client.query(text), this.#answerTimeoutMs, noop).catch(
        (error: unknown) => {
          session.onFailure();
          throw error;
        },
      );
    } finally {
      if (--session.busy === 0) session.opened.keepProcessAlive(false);
    }
  }

  async #open(): Promise<ListenerSession> {
    const opened = await this.#source.open();
    const session: ListenerSession = {
      opened,
      tail: Promise.resolve(),
      busy: 0,
      onNotification: (message) => {
        const entry = this.#channels.get(message.channel);
        if (entry) for (const wakeup of entry.wakeups) wakeup.notify();
      },
      onFailure: () => this.#failed(session),
    };
    opened.client.on('notification', session.onNotification);
    opened.client.on('error', session.onFailure);
    opened.client.on('end', session.onFailure);
    if (this.#closed) {
      await this.#end(session, false);
      throw new BackendUnavailableError('The PostgreSQL lock provider is closed');
    }
    const channels = [...this.#channels.keys()];
    opened.keepProcessAlive(false);
    if (channels.length > 0) {
      const run = this.#query(session, channels.map((channel) => `LISTEN ${channel}`).join('; '));
      session.tail = run.catch(noop);
    }
    return session;
  }

  #failed(session: ListenerSession): void {
    void this.#session?.then((current) => {
      if (current !== session) return;
      this.#session = undefined;
      void this.#end(session, true);
      if (this.#closed || this.#channels.size === 0) return;
      const channels = [...this.#channels.keys()].map((channel) => `LISTEN ${channel}`);
      const reopened = this.#run(channels.join('; ')); // on a new session
      for (const entry of this.#channels.values()) {
        for (const wakeup of entry.wakeups) wakeup.notify();
        entry.listening = reopened;
      }
      // Releases between the failure and the new LISTENs sent no NOTIFY we heard: wake every
      // watcher once more now that it is subscribed again (subscribe-then-retry).
      reopened.then(() => this.#wakeAll(), noop);
    }, noop);
  }

  #wakeAll(): void {
    for (const entry of this.#channels.values()) {
      for (const wakeup of entry.wakeups) wakeup.notify();
    }
  }

  async #end(session: ListenerSession, destroy: boolean): Promise<void> {
    const { client } = session.opened;
    client.removeListener('notification', session.onNotification);
    let discard = destroy;
    if (!discard) {
      // A pooled client goes back without our LISTENs.
      discard = await session.tail
        .then(() => this.#query(session, 'UNLISTEN *'))
        .then(
          () => false,
          () => true,
        );
    }
    client.removeListener('error', session.onFailure);
    client.removeListener('end', session.onFailure);
    await session.opened.dispose(discard);
  }
}
