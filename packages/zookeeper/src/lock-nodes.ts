/**
 * Where lock nodes live, how the path to them is created, and the errors that name the
 * server.
 *
 * @module
 */
import { BackendUnavailableError, type LockKind } from '@lockkit/core';
import { readableKey } from '@lockkit/core/backend';
import type { ZkSession } from './zk-session.js';
import { ZkCode, type ZooKeeperAcl, zkCode } from './zookeeper-client.js';
import type { ResolvedZooKeeperOptions } from './zookeeper-options.js';

/**
 * The parent node of a lock (name→key mapping version 1, pinned by tests):
 * `<basePath>/<family>.<readable part of the name>.<base32 SHA-256 of namespace, family, name>`.
 */
export function lockParentPath(
  basePath: string,
  namespace: string,
  kind: LockKind,
  name: string,
): string {
  const key = readableKey(namespace, kind, name, { maxLength: 200 });
  return basePath === '/' ? `/${key}` : `${basePath}/${key}`;
}

/** Creates the base path (unless it is assumed to exist) and the lock's `parent`. */
export async function ensureParent(
  session: ZkSession,
  parent: string,
  options: ResolvedZooKeeperOptions,
  acl: ZooKeeperAcl[],
): Promise<void> {
  const paths: string[] = [];
  if (!options.assumePathExists && options.basePath !== '/') {
    const parts = options.basePath.split('/');
    for (let i = 2; i <= parts.length; i++) paths.push(parts.slice(0, i).join('/'));
  }
  paths.push(parent);
  for (const [index, node] of paths.entries()) {
    try {
      await session.create(node, acl);
    } catch (error) {
      const code = zkCode(error);
      if (code === ZkCode.NODE_EXISTS) continue;
      if (code === ZkCode.NO_NODE && index === 0) {
        throw missingRoot(session, node, options, error);
      }
      throw error;
    }
  }
}

/** The client's `error` as a `BackendUnavailableError` naming the server. */
export function unavailable(what: string, error: unknown, address: string): unknown {
  if (BackendUnavailableError.isInstance(error)) return error;
  const code = zkCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  const hint =
    code === ZkCode.NO_AUTH
      ? ': the ACL of the node does not let this client do that (check the `auth` and `acl` options)'
      : '';
  return new BackendUnavailableError(
    `ZooKeeper ${what} on ${address} failed: ${detail}${code === undefined ? '' : ` (code ${code})`}${hint}`,
    { cause: error, retryable: code !== ZkCode.NO_AUTH }, // an ACL stays until someone changes it
  );
}

/** The first node lockkit creates has no parent: the chroot or the assumed base path. */
function missingRoot(
  session: ZkSession,
  node: string,
  options: ResolvedZooKeeperOptions,
  error: unknown,
): BackendUnavailableError {
  const [, ...parts] = session.address.split('/');
  const chroot = parts.length > 0 ? `the chroot /${parts.join('/')}` : undefined;
  const base = options.assumePathExists
    ? `the base path ${options.basePath} (assumePathExists is set)`
    : undefined;
  const what = `${[base, chroot].filter(Boolean).join(' or ')} does not exist, so ${node} cannot be created`;
  return new BackendUnavailableError(`ZooKeeper on ${session.address}: ${what}`, {
    cause: error,
    retryable: false, // stays missing until someone creates it
  });
}
