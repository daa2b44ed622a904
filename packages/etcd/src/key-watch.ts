/**
 * Watches on `etcd3`'s one multiplexed watch stream per client; the client re-creates a watch
 * from the last revision it saw when the stream breaks (for example, when a member dies).
 *
 * A watch that starts at a past revision is "unsynced" on the server: etcd replays what it
 * missed, and delivers what comes next, from a loop that runs every 100 ms. So a watch that
 * must be prompt starts at the present (`since` mode): its creation answer says which
 * revision the present was, and when that is later than what the owner last saw, the owner
 * is told to look again (`moved`). A watch that must not miss a past event (`from` mode)
 * starts at that revision and accepts the delay.
 *
 * @module
 */
import type { Etcd3, IWatchResponse, Watcher } from 'etcd3';
import { prefixEnd } from './lock-keys.js';

/** What a watch covers. */
export type WatchTarget =
  | { readonly key: string; readonly deletesOnly: boolean }
  | { readonly prefix: string; readonly deletesOnly: boolean };

/**
 * What a watch reports: a change; that it ended without one (cancelled by the server); or
 * that the store moved on between what the owner last saw and the watch's start (`moved`):
 * the owner looks again.
 */
export type WatchEvent = 'put' | 'delete' | 'failed' | 'moved';

/** Where a watch starts: at the present (`since`: the owner has seen up to that revision), or at a past revision (`from`). */
export type WatchStart = { readonly since: bigint } | { readonly from: bigint };

/** A running watch; `close()` cancels it (never throws, never waits). */
export interface KeyWatch {
  close(): void;
}

/** Starts watching `target`, calling `onEvent` for every event. */
export function watchFrom(
  client: Etcd3,
  target: WatchTarget,
  start: WatchStart,
  onEvent: (event: WatchEvent) => void,
): KeyWatch {
  let builder = client.watch();
  if ('from' in start) builder = builder.startRevision(start.from.toString());
  const seen = 'since' in start ? start.since : start.from - 1n;
  builder =
    'key' in target
      ? builder.key(target.key)
      : builder.inRange({ start: Buffer.from(target.prefix), end: prefixEnd(target.prefix) });
  if (target.deletesOnly) builder = builder.only('delete');
  const watcher: Watcher = builder.watcher();
  let closed = false;
  let ended = false;
  const report = (event: WatchEvent): void => {
    if (!closed) onEvent(event);
  };
  // Also after a reconnection (the client starts again where it left off, unsynced).
  watcher.on('connected', (response: IWatchResponse) => {
    if (BigInt(response.header.revision) > seen) report('moved');
  });
  watcher.on('put', () => report('put'));
  watcher.on('delete', () => report('delete'));
  // The server cancelled the watch (its revision was compacted, or a permission changed):
  // whatever it would have reported is unknown now, so the owner looks again.
  watcher.on('error', () => {
    ended = true; // the client dropped it already: nothing to cancel
    report('failed');
  });
  return {
    close: () => {
      if (closed) return;
      closed = true;
      if (!ended) watcher.cancel().catch(() => undefined);
    },
  };
}
