/**
 * The part of `node-zookeeper-client` 1.1.x this package uses, typed structurally (the
 * library ships no types), plus the module loader. Nothing here talks to a server.
 *
 * @module
 */
import library from 'node-zookeeper-client';
import exceptions from 'node-zookeeper-client/lib/Exception.js';
import juteLibrary from 'node-zookeeper-client/lib/jute/index.js';

/** A node's metadata. Long fields are 8-byte big-endian buffers. */
export interface ZooKeeperStat {
  /** zxid of the transaction that created the node (cluster-wide, only grows). */
  readonly czxid: Buffer;
  /** Session id owning an ephemeral node (zero for persistent nodes). */
  readonly ephemeralOwner: Buffer;
  readonly numChildren: number;
}

/** A watch notification. */
export interface ZooKeeperEvent {
  /** 1 created, 2 deleted, 3 data changed, 4 children changed. */
  readonly type: number;
  readonly name: string;
  readonly path: string;
}

/** An error from the client library (`code` is ZooKeeper's, e.g. -101 NO_NODE). */
export interface ZooKeeperException extends Error {
  readonly code: number;
}

/** An ACL entry: permission bits (READ 1, WRITE 2, CREATE 4, DELETE 8, ADMIN 16) for an id. */
export interface ZooKeeperAcl {
  readonly permission: number;
  readonly id: { readonly scheme: string; readonly id: string };
}

type Callback<T> = (error: ZooKeeperException | null | undefined, result: T) => void;
type Watcher = (event: ZooKeeperEvent) => void;

/**
 * A `node-zookeeper-client` `Client` (what `zookeeper.createClient(...)` returns). Only the
 * members lockkit calls are listed.
 */
export interface ZooKeeperClient {
  connect(): void;
  close(): void;
  getSessionId(): Buffer;
  getSessionTimeout(): number;
  getSessionPassword(): Buffer;
  addAuthInfo(scheme: string, auth: Buffer): void;
  create(
    path: string,
    data: Buffer | undefined,
    acls: ZooKeeperAcl[],
    mode: number,
    callback: Callback<string>,
  ): void;
  remove(
    path: string,
    version: number,
    callback: (error?: ZooKeeperException | null) => void,
  ): void;
  exists(
    path: string,
    watcher: Watcher | undefined,
    callback: Callback<ZooKeeperStat | null>,
  ): void;
  getChildren(path: string, watcher: Watcher | undefined, callback: Callback<string[]>): void;
  getData(
    path: string,
    watcher: Watcher | undefined,
    callback: (
      error: ZooKeeperException | null | undefined,
      data: Buffer | null,
      stat?: ZooKeeperStat,
    ) => void,
  ): void;
  setData(path: string, data: Buffer, version: number, callback: Callback<ZooKeeperStat>): void;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  removeListener(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** The library's module object (the members lockkit uses). */
export interface ZooKeeperModule {
  createClient(
    connectionString: string,
    options: {
      sessionTimeout: number;
      spinDelay: number;
      retries: number;
      sessionId?: Buffer;
      sessionPassword?: Buffer;
    },
  ): ZooKeeperClient;
  /** The library's exceptions (`create(code)` builds one like the library's own). */
  readonly Exception: { create(code: number, path?: string): ZooKeeperException };
  readonly ACL: {
    readonly OPEN_ACL_UNSAFE: ZooKeeperAcl[];
    readonly CREATOR_ALL_ACL: ZooKeeperAcl[];
    readonly READ_ACL_UNSAFE: ZooKeeperAcl[];
  };
}

/** ZooKeeper error codes lockkit distinguishes. */
export const ZkCode = {
  CONNECTION_LOSS: -4,
  OPERATION_TIMEOUT: -7,
  NO_NODE: -101,
  NO_AUTH: -102,
  NODE_EXISTS: -110,
  NOT_EMPTY: -111,
  SESSION_EXPIRED: -112,
  AUTH_FAILED: -115,
} as const;

/** Watch event types. */
export const ZkEvent = { CREATED: 1, DELETED: 2, DATA_CHANGED: 3, CHILDREN_CHANGED: 4 } as const;

/** Create modes. */
export const ZkCreateMode = { PERSISTENT: 0, EPHEMERAL_SEQUENTIAL: 3 } as const;

/** Internal connection-manager states of the library (`client.connectionManager.state`). */
export const ZkManagerState = {
  CONNECTING: 1,
  CONNECTED: 2,
  CLOSING: -1,
  CLOSED: -2,
  SESSION_EXPIRED: -3,
} as const;

interface JuteRecord {
  [field: string]: unknown;
}

/** The library's wire-protocol module (`lib/jute`), for requests whose reply header we need. */
interface JuteModule {
  readonly OP_CODES: { readonly CREATE: number };
  readonly protocol: {
    readonly RequestHeader: new () => JuteRecord;
    readonly CreateRequest: new () => JuteRecord;
  };
  readonly Request: new (header: JuteRecord, payload: JuteRecord) => unknown;
}

interface QueueingManager {
  queue(
    request: unknown,
    callback: (
      error: ZooKeeperException | null | undefined,
      response: { header: { zxid: Buffer }; payload: { path: string } | null } | undefined,
    ) => void,
  ): void;
}

/** A created node and the zxid of the transaction that created it (its `czxid`). */
export interface CreatedNode {
  readonly path: string;
  readonly czxid: bigint;
}

const jute = juteLibrary as JuteModule;
let loaded: ZooKeeperModule | undefined;

/**
 * Sends a create and reports the created path with the zxid from the reply header, which for
 * a create is the new node's `czxid` (node-zookeeper-client has no create2/createWithStat, and
 * its `create()` drops the header). Returns false when `client` does not expose the library's
 * connection manager; the caller then creates and reads the stat separately.
 */
export function sendCreateWithZxid(
  client: ZooKeeperClient,
  path: string,
  data: Buffer,
  acl: ZooKeeperAcl[],
  mode: number,
  callback: (
    error: ZooKeeperException | null | undefined,
    created: CreatedNode | undefined,
  ) => void,
): boolean {
  const manager = (client as unknown as { connectionManager?: Partial<QueueingManager> })
    .connectionManager;
  if (typeof manager?.queue !== 'function') return false;
  const header = new jute.protocol.RequestHeader();
  header['type'] = jute.OP_CODES.CREATE;
  const payload = new jute.protocol.CreateRequest();
  payload['path'] = path;
  payload['data'] = data;
  payload['acl'] = acl.map((entry) => (entry as unknown as { toRecord(): unknown }).toRecord());
  payload['flags'] = mode;
  manager.queue(new jute.Request(header, payload), (error, response) => {
    if (error || !response?.payload)
      callback(error ?? (new Error('empty create reply') as ZooKeeperException), undefined);
    else callback(null, { path: response.payload.path, czxid: zkLong(response.header.zxid) });
  });
  return true;
}

/**
 * `node-zookeeper-client` (CommonJS, imported statically so that both module formats and
 * bundlers find it), with unknown error codes made harmless on first use.
 */
export function zookeeperModule(): ZooKeeperModule {
  if (!loaded) {
    tolerateUnknownErrorCodes(exceptions as ExceptionModule);
    loaded = library as ZooKeeperModule;
  }
  return loaded;
}

interface ExceptionModule {
  create(code: number, path?: string): Error;
}

const tolerant = Symbol.for('lockkit.zookeeper.tolerantErrorCodes');

/**
 * node-zookeeper-client 1.1.x knows only ZooKeeper 3.4's error codes: a reply carrying a newer
 * one (3.5+ servers send e.g. -12, -13, -14, -120 …) makes its `Exception.create` throw inside
 * the socket's data handler — an uncaught exception that would crash the process (seen in
 * CI during a session expiry: "Unknown code: -12"). Unknown codes become an exception like
 * the library's own, named UNKNOWN_ERROR, that keeps the server's code; the request fails
 * with it like with any other error.
 */
export function tolerateUnknownErrorCodes(exceptions: ExceptionModule): void {
  const marked = exceptions as ExceptionModule & { [tolerant]?: true };
  if (marked[tolerant]) return;
  marked[tolerant] = true;
  const create = exceptions.create;
  exceptions.create = (code, path) => {
    try {
      return create(code, path);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('Unknown code')) throw error;
      const unknown = create(-1, path) as Error & { code: number }; // SYSTEM_ERROR's shape
      unknown.code = code;
      unknown.name = 'UNKNOWN_ERROR';
      unknown.message = `Exception: UNKNOWN_ERROR[${code}]${path ? `@${path}` : ''}`;
      return unknown;
    }
  };
}

/** The ZooKeeper error code of `error`, if it is a client-library exception. */
export function zkCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

/** A 64-bit ZooKeeper long (8-byte buffer) as a bigint. */
export function zkLong(buffer: Buffer): bigint {
  return buffer.readBigInt64BE(0);
}
