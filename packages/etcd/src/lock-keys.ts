/**
 * Where a lock's keys live. Each lock is a queue: a key prefix under which every contender
 * (holder or waiter) has one key, `<prefix><tag>.<uuid>`, attached to its provider's lease.
 * The tag says what the contender wants (a read-write lock's readers and writers share one
 * queue); the queue order is the keys' create revision, which etcd assigns.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { LockKind } from '@lockkit/core';
import { readableKey } from '@lockkit/core/backend';

/**
 * The queue prefix of a lock (name→key mapping version 1, pinned by tests):
 * `<keyPrefix><family>.<readable part of the name>.<base32 SHA-256 of namespace, family, name>/`.
 */
export function lockPrefix(
  keyPrefix: string,
  namespace: string,
  kind: LockKind,
  name: string,
): string {
  return `${keyPrefix}${readableKey(namespace, kind, name, { maxLength: 200 })}/`;
}

/** Key tag of each kind. */
export const keyTags: Readonly<Record<LockKind, string>> = {
  mutex: 'lock',
  read: 'read',
  write: 'write',
  semaphore: 'permit',
};

const kindOfTag: Readonly<Record<string, LockKind>> = {
  lock: 'mutex',
  read: 'read',
  write: 'write',
  permit: 'semaphore',
};

/** Length of a contender key's id (a UUID), after `<tag>.`. */
const ID_LENGTH = 36;

/** Tag of a semaphore contender taking more than one permit: `permits-<n>`. */
const weightedTag = /^permits-([1-9][0-9]{0,9})$/;

/**
 * A contender key for `kind` in the queue at `prefix` (a fresh one unless `id`, a UUID, is
 * given); a semaphore request for `permits` > 1 is tagged `permits-<n>` (its weight in the
 * queue).
 */
export function contenderKey(
  prefix: string,
  kind: LockKind,
  permits = 1,
  id: string = randomUUID(),
): string {
  const tag = kind === 'semaphore' && permits > 1 ? `permits-${permits}` : keyTags[kind];
  return `${prefix}${tag}.${id}`;
}

/** Names kept per queue and tag, and queues remembered (the least recently used go first). */
const namesPerQueue = 4;
const queuesRemembered = 1000;

/**
 * A provider's contender keys to use again. etcd keeps every key a queue ever had in its
 * in-memory index until the next compaction, and listing a queue walks all of them: with a
 * fresh key per acquire, an uncontended lock got slower with every acquire since the last
 * compaction. A key whose deletion etcd confirmed (our release or withdrawal, conditional on
 * its create revision) is free, and the next contender of this provider for that queue takes
 * it again: it gets a new create revision (its place in the queue and its fencing token), and
 * the index keeps a few keys per queue. A key is never taken twice at once, and one whose end
 * is uncertain (a failed request, a lost lease, a hand-over) is never given back.
 */
export class ContenderNames {
  /** Key without its id (`<prefix><tag>.`) → ids of keys confirmed deleted. */
  readonly #free = new Map<string, string[]>();

  /** A key for a contender: a free one of its queue and tag, or a fresh one. */
  take(prefix: string, kind: LockKind, permits = 1): string {
    const stem = contenderKey(prefix, kind, permits, '');
    return `${stem}${this.#free.get(stem)?.pop() ?? randomUUID()}`;
  }

  /** `key` was deleted, as etcd confirmed: it may be taken again. */
  giveBack(key: string): void {
    const stem = key.slice(0, key.length - ID_LENGTH);
    const ids = this.#free.get(stem) ?? [];
    this.#free.delete(stem); // re-inserted last: the most recently used
    if (ids.length < namesPerQueue) ids.push(key.slice(stem.length));
    this.#free.set(stem, ids);
    if (this.#free.size > queuesRemembered) {
      this.#free.delete(this.#free.keys().next().value as string);
    }
  }
}

/** The tag of a contender key, or undefined for a key lockkit did not write. */
function tagOfKey(prefix: string, key: string): string | undefined {
  if (!key.startsWith(prefix)) return undefined;
  const rest = key.slice(prefix.length);
  const dot = rest.indexOf('.');
  if (dot < 0 || rest.length - dot - 1 !== ID_LENGTH) return undefined;
  return rest.slice(0, dot);
}

/** The kind a contender key asks for, or undefined for a key lockkit did not write. */
export function kindOfKey(prefix: string, key: string): LockKind | undefined {
  const tag = tagOfKey(prefix, key);
  if (tag === undefined) return undefined;
  return kindOfTag[tag] ?? (weightedTag.test(tag) ? 'semaphore' : undefined);
}

/** The permits a contender key takes (1 but for a weighted semaphore request). */
export function permitsOfKey(prefix: string, key: string): number {
  const match = weightedTag.exec(tagOfKey(prefix, key) ?? '');
  return match ? Number(match[1]) : 1;
}

/** The end of the key range of everything under `prefix` (the prefix with its last byte + 1). */
export function prefixEnd(prefix: string): Buffer {
  const end = Buffer.from(prefix);
  end[end.length - 1] = end[end.length - 1]! + 1;
  return end;
}
