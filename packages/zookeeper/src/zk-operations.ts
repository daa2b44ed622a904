import {
  type CreatedNode,
  sendCreateWithZxid,
  ZkCode,
  ZkCreateMode,
  type ZooKeeperAcl,
  type ZooKeeperClient,
  type ZooKeeperEvent,
  type ZooKeeperException,
  type ZooKeeperStat,
  zkCode,
  zkLong,
} from './zookeeper-client.js';

/** The reply of a request that was abandoned after its deadline (so its effect is unknown). */
export type LateReply<T> = (error: ZooKeeperException | null | undefined, value: T) => void;

/** The ZooKeeper requests lockkit makes, as promises, on top of one `request` primitive. */
export abstract class ZkOperations {
  abstract readonly client: ZooKeeperClient;

  /** Sends one request; see ZkSession. */
  abstract request<T>(
    what: string,
    start: (done: (error: ZooKeeperException | null | undefined, value: T) => void) => void,
    onLate?: LateReply<T>,
  ): Promise<T>;

  exists(path: string, watcher?: (event: ZooKeeperEvent) => void): Promise<ZooKeeperStat | null> {
    return this.request(`exists ${path}`, (done) => this.client.exists(path, watcher, done));
  }

  getChildren(path: string, watcher?: (event: ZooKeeperEvent) => void): Promise<string[]> {
    return this.request(`getChildren ${path}`, (done) =>
      this.client.getChildren(path, watcher, done),
    );
  }

  /** The node's data, or null when the node does not exist (then no watch is left behind). */
  async getData(path: string, watcher?: (event: ZooKeeperEvent) => void): Promise<Buffer | null> {
    try {
      const data = await this.request<Buffer | null>(`getData ${path}`, (done) =>
        this.client.getData(path, watcher, done),
      );
      return data ?? Buffer.alloc(0);
    } catch (error) {
      if (zkCode(error) === ZkCode.NO_NODE) return null;
      throw error;
    }
  }

  /** The node's data and stat, or null when the node does not exist (no watch is set). */
  async readNode(path: string): Promise<{ data: Buffer; stat: ZooKeeperStat } | null> {
    try {
      return await this.request(`getData ${path}`, (done) =>
        this.client.getData(path, undefined, (error, data, stat) =>
          done(
            error ?? (stat ? null : noNodeError(path)),
            stat ? { data: data ?? Buffer.alloc(0), stat } : null,
          ),
        ),
      );
    } catch (error) {
      if (zkCode(error) === ZkCode.NO_NODE) return null;
      throw error;
    }
  }

  setData(path: string, data: Buffer): Promise<ZooKeeperStat> {
    return this.request(`setData ${path}`, (done) => this.client.setData(path, data, -1, done));
  }

  /** Creates a persistent node (a parent). */
  create(path: string, acl: ZooKeeperAcl[]): Promise<string> {
    return this.request(`create ${path}`, (done) =>
      this.client.create(path, undefined, acl, ZkCreateMode.PERSISTENT, done),
    );
  }

  /** Creates an ephemeral-sequential node; resolves its path and `czxid`. */
  createEphemeralSequential(
    path: string,
    data: Buffer,
    acl: ZooKeeperAcl[],
    onLate?: LateReply<CreatedNode | undefined>,
  ): Promise<CreatedNode> {
    const mode = ZkCreateMode.EPHEMERAL_SEQUENTIAL;
    return this.request<CreatedNode | undefined>(
      `create ${path}`,
      (done) => {
        if (sendCreateWithZxid(this.client, path, data, acl, mode, done)) return;
        // A client without the library's internals: create, then read the stat.
        this.client.create(path, data, acl, mode, (error, created) => {
          if (error) return done(error, undefined);
          this.client.exists(created, undefined, (statError, stat) =>
            done(
              statError ?? (stat ? null : noNodeError(created)),
              stat ? { path: created, czxid: zkLong(stat.czxid) } : undefined,
            ),
          );
        });
      },
      onLate,
    ) as Promise<CreatedNode>;
  }

  /** Deletes `path`: true if it existed, false if it did not (or, for a parent, had children). */
  async remove(path: string): Promise<boolean> {
    try {
      await this.request<undefined>(`remove ${path}`, (done) =>
        this.client.remove(path, -1, (error) => done(error, undefined)),
      );
      return true;
    } catch (error) {
      const code = zkCode(error);
      if (code === ZkCode.NO_NODE || code === ZkCode.NOT_EMPTY) return false;
      throw error;
    }
  }
}

function noNodeError(path: string): ZooKeeperException {
  return Object.assign(new Error(`${path} vanished right after its create`), {
    code: ZkCode.NO_NODE,
  });
}
