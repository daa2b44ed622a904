/**
 * Curator's "protected" create for ephemeral-sequential nodes. The node name carries a
 * random UUID, so when a create's reply is lost (CONNECTION_LOSS: the request may or may not
 * have been applied) the node is looked up among the parent's children instead of being
 * created twice; the client library's blind re-send is off (`retries: 0`). A reply that
 * arrives after the caller gave up deletes the node it created, so no orphan node blocks
 * the queue until the session ends.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { delay } from '@lockkit/core/backend';
import type { BackgroundWork } from './background-work.js';
import type { ZkSession } from './zk-session.js';
import { type CreatedNode, ZkCode, type ZooKeeperAcl, zkCode, zkLong } from './zookeeper-client.js';

/** How a node is created and where. */
export interface CreateTarget {
  readonly session: ZkSession;
  /** The lock's parent node. */
  readonly parent: string;
  /** Node name prefix, e.g. `lock-`. */
  readonly prefix: string;
  /** The node's data (the hold record: owner label and since). */
  readonly data: Buffer;
  readonly acl: ZooKeeperAcl[];
  /** Creates the parent (and the base path, unless it is assumed to exist). */
  readonly ensureParent: () => Promise<void>;
  readonly background: BackgroundWork;
}

const maxAttempts = 5;

/**
 * Creates `<parent>/<prefix><uuid>-<sequence>` (ephemeral-sequential); resolves its full path
 * and `czxid`.
 */
export async function createProtected(target: CreateTarget): Promise<CreatedNode> {
  const { session, parent, prefix, data, acl, ensureParent, background } = target;
  const id = randomUUID();
  const path = `${parent}/${prefix}${id}-`;
  const onLate = (error: unknown, created: CreatedNode | undefined): void => {
    if (!error && created) background.run(() => removeNode(session, created.path, background));
    else if (zkCode(error) === ZkCode.CONNECTION_LOSS) {
      background.run(() => findAndRemove(session, parent, id, background));
    }
  };
  for (let attempt = 1; ; attempt++) {
    try {
      return await session.createEphemeralSequential(path, data, acl, onLate);
    } catch (error) {
      const code = zkCode(error);
      if (attempt >= maxAttempts || session.lost) throw error;
      if (code === ZkCode.NO_NODE) {
        await ensureParent(); // the parent is created on demand (and removed when empty)
      } else if (code === ZkCode.CONNECTION_LOSS) {
        const found = await findProtected(session, parent, id);
        const stat = found ? await session.exists(found) : null;
        if (found && stat) return { path: found, czxid: zkLong(stat.czxid) };
      } else {
        throw error; // includes our own deadline: onLate cleans up if it lands later
      }
    }
  }
}

/** The full path of the child whose name contains `id`, if the create was applied. */
export async function findProtected(
  session: ZkSession,
  parent: string,
  id: string,
): Promise<string | undefined> {
  let children: string[];
  try {
    children = await session.getChildren(parent);
  } catch (error) {
    if (zkCode(error) === ZkCode.NO_NODE) return undefined;
    throw error;
  }
  const child = children.find((name) => name.includes(id));
  return child === undefined ? undefined : `${parent}/${child}`;
}

async function findAndRemove(
  session: ZkSession,
  parent: string,
  id: string,
  background: BackgroundWork,
): Promise<void> {
  const found = await retrying(session, background, () => findProtected(session, parent, id));
  if (found) await removeNode(session, found, background);
}

/**
 * Deletes one of our nodes, retrying transport failures while the session lives (Curator's
 * "guaranteed" delete): a node of a live session that nobody deletes would block every
 * later contender. A lost session of an owned client takes its nodes with it.
 */
export async function removeNode(
  session: ZkSession,
  path: string,
  background: BackgroundWork,
): Promise<void> {
  await retrying(session, background, () => session.remove(path));
}

async function retrying<T>(
  session: ZkSession,
  background: BackgroundWork,
  work: () => Promise<T>,
): Promise<T | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const gone = session.lost && session.owned;
      if (gone || background.stopping || attempt >= 10) throw error;
      await delay(Math.min(100 * 2 ** attempt, 5000), background.signal);
    }
  }
}
