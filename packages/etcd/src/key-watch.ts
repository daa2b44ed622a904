/**
 * Watches on `etcd3`'s one multiplexed watch stream per client. A watch starts at a given
 * revision, so nothing that happened after the listing it is based on is missed, however late
 * the watch reaches the server; the client re-creates it from the last revision it saw when
 * the stream breaks (for example, when a member dies).
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
 * that it reached the server after the store had moved past its start revision (`behind`):
 * etcd then replays the missed events from a loop that runs every 100 ms, so the owner had
 * better look at once than wait for them.
 */
export type WatchEvent = 'put' | 'delete' | 'failed' | 'behind';

/** A running watch; `close()` cancels it (never throws, never waits). */
export interface KeyWatch {
  close(): void;
}

/** Starts watching `target` from `fromRevision`, calling `onEvent` for every event. */
export function watchFrom(
  client: Etcd3,
  target: WatchTarget,
  fromRevision: bigint,
  onEvent: (event: WatchEvent) => void,
): KeyWatch {
  let builder = client.watch().startRevision(fromRevision.toString());
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
  watcher.on('connected', (response: IWatchResponse) => {
    if (BigInt(response.header.revision) >= fromRevision) report('behind');
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
