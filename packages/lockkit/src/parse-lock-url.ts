import { fileURLToPath } from 'node:url';
import { InvalidArgumentError } from '@lockkit/core';
import { type BackendId, type BackendInfo, backends, schemes } from './backends.js';
import { redactUrl } from './redact-url.js';
import { redisNodes } from './redis-url.js';
import { splitUrl, withPort } from './url-authority.js';
import { splitQuery } from './url-query.js';

/**
 * Extra provider options for {@link createLockProvider}: the backend factory's own options
 * (see the backend package's README), except those the URL supplies (`directory`, `nodes`,
 * `connection`, `pool`, `connectionString`, `client`, `hosts`). They win over query parameters.
 */
export interface CreateLockProviderOptions {
  /**
   * Isolates applications sharing a server: the same name in two namespaces is two locks.
   * @defaultValue the `namespace` query parameter, else `''`
   */
  readonly namespace?: string | undefined;
  /**
   * The label recorded with every hold, reported by `lock.inspect()`.
   * @defaultValue the `owner` query parameter, else `<hostname>:<pid>`
   */
  readonly owner?: string | undefined;
  /**
   * Backend packages you imported yourself, by backend id — for bundlers, which cannot follow
   * the import by name `createLockProvider` otherwise does: `{ redis }` after
   * `import * as redis from '@lockkit/redis'`. A URL for a backend not listed here is still
   * imported by name. Not passed to the backend's factory.
   */
  readonly backendModules?: BackendModules | undefined;
  /** Any other option of the backend's factory, e.g. `leaseMs` for Redis and files. */
  readonly [option: string]: unknown;
}

/** Backend packages' modules by backend id (see `backendModules`). */
export type BackendModules = Readonly<Partial<Record<Exclude<BackendId, 'memory'>, object>>>;

/** What a lock URL resolves to, before anything is imported or connected. */
export interface LockUrl {
  /** The backend the scheme selects (`provider.backend` of the provider it makes). */
  readonly backend: BackendId;
  /** The package that implements it, e.g. `@lockkit/redis`. */
  readonly packageName: string;
  /** Everything to install for it, e.g. `['@lockkit/redis', 'ioredis']`. */
  readonly packages: readonly string[];
  /** The options object the backend's factory receives. */
  readonly providerOptions: Readonly<Record<string, unknown>>;
}

/**
 * Resolves a lock URL (and extra options) to a backend and its factory options, without
 * importing or connecting anything. Throws `InvalidArgumentError` for a malformed URL, an
 * unknown scheme or query parameter, or an option the URL already gives. Accepted forms:
 *
 * | URL | backend |
 * | --- | --- |
 * | `memory:` | in-memory (this process only) |
 * | `file:///absolute/dir` | `@lockkit/file` on that directory |
 * | `redis://[user:pass@]host[:port][/db]`, `rediss://…` | `@lockkit/redis`, one node |
 * | `redis://[user:pass@]h1[:p1],h2[:p2],h3[:p3][/db]` | `@lockkit/redis`, Redlock over the hosts |
 * | `redis+cluster://[user:pass@]h1[:p1],h2[:p2]` | `@lockkit/redis`, one Redis Cluster (seed nodes) |
 * | `redis+sentinel://[user:pass@]s1[:p1],s2[:p2]/<masterName>[/db]` | `@lockkit/redis`, the primary the Sentinels name |
 * | `postgres://…`, `postgresql://…` | `@lockkit/postgres` (the URL is pg's connection string) |
 * | `mysql://…`, `mariadb://…` | `@lockkit/mysql` (the URL is mysql2's) |
 * | `zookeeper://h1[:p],h2[:p][/chroot]`, `zk://…` | `@lockkit/zookeeper` |
 * | `etcd://[user:pass@]h1[:p],h2[:p][/key/prefix/]`, `etcds://…` (TLS) | `@lockkit/etcd` |
 *
 * Query parameters named like a provider option of the backend (`?leaseMs=10000&namespace=app`)
 * set that option; others are left in the URL for the client library (Redis, PostgreSQL,
 * MySQL) or rejected (files, memory, ZooKeeper, etcd).
 */
export function parseLockUrl(url: string | URL, options: CreateLockProviderOptions = {}): LockUrl {
  const text = typeof url === 'string' ? url : url instanceof URL ? url.href : undefined;
  if (text === undefined) {
    throw new InvalidArgumentError('The lock URL must be a string or a URL');
  }
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('createLockProvider options must be an object');
  }
  const shown = redactUrl(text.trim());
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(text.trim())?.[1]?.toLowerCase();
  const id = scheme === undefined ? undefined : schemes[scheme];
  if (id === undefined) {
    const known = Object.keys(schemes)
      .map((name) => `${name}:`)
      .join(', ');
    throw new InvalidArgumentError(
      scheme === undefined
        ? `Not a lock URL (no scheme): "${shown}". Use one of: ${known}`
        : `Unknown lock URL scheme "${scheme}:" in ${shown}. Use one of: ${known}`,
    );
  }
  const backend = backends[id];
  const fromUrl = parsers[id](text.trim(), backend, shown);
  for (const key of Object.keys(options)) {
    if (backend.urlOwnedOptions.includes(key)) {
      throw new InvalidArgumentError(
        `Option "${key}" cannot be combined with a URL: the URL gives it. ` +
          `Use ${backend.packageName}'s ${backend.factory}() to pass "${key}" yourself.`,
      );
    }
  }
  if (id === 'memory') {
    // The memory provider takes any object; name its two options so typos do not pass.
    for (const key of Object.keys(options)) {
      if (!['namespace', 'owner', 'store', 'backendModules'].includes(key)) {
        throw new InvalidArgumentError(
          `Unknown option "${key}" (memory takes: namespace, owner, store)`,
        );
      }
    }
  }
  const { backendModules: _modules, ...factoryOptions } = options;
  return Object.freeze({
    backend: id,
    packageName: backend.packageName,
    packages: backend.packages,
    providerOptions: Object.freeze({ ...fromUrl, ...factoryOptions }),
  });
}

type Parser = (url: string, backend: BackendInfo, shown: string) => Record<string, unknown>;

const parsers: Record<BackendId, Parser> = {
  memory: (url, backend, shown) => {
    const match = /^memory:(?:\/\/)?(?:\?([^#]*))?$/i.exec(url);
    if (!match) {
      throw new InvalidArgumentError(
        `A memory URL has no host or path: "memory:" or "memory:?namespace=…", got ${shown}`,
      );
    }
    return { ...splitQuery(match[1] ?? '', backend, shown).options };
  },

  file: (url, backend, shown) => {
    if (!/^file:\/\//i.test(url)) {
      throw new InvalidArgumentError(
        `A file URL names an absolute directory: file:///var/lock/app (pathToFileURL(dir) makes one), got ${shown}`,
      );
    }
    const parts = /^([^?#]*)(?:\?([^#]*))?(#.*)?$/.exec(url);
    if (!parts || parts[3] !== undefined) {
      throw new InvalidArgumentError(`A lock URL has no #fragment: ${shown}`);
    }
    let location: URL;
    try {
      location = new URL(parts[1] ?? '');
    } catch {
      throw new InvalidArgumentError(`Not a valid file URL: ${shown}`);
    }
    if (location.hostname !== '' && location.hostname !== 'localhost') {
      throw new InvalidArgumentError(
        `A file URL names a local directory (file:///path), not host "${location.hostname}": ${shown}`,
      );
    }
    const { options } = splitQuery(parts[2] ?? '', backend, shown);
    return { directory: fileURLToPath(location), ...options };
  },

  redis: redisNodes,

  postgres: (url, backend, shown) => {
    const parts = splitUrl(url, shown);
    const { options, clientQuery } = splitQuery(parts.query, backend, shown);
    return { connection: checkedUrl(url, parts.query, clientQuery, shown), ...options };
  },

  mysql: (url, backend, shown) => {
    const parts = splitUrl(url, shown);
    const { options, clientQuery } = splitQuery(parts.query, backend, shown);
    const connection = checkedUrl(url, parts.query, clientQuery, shown).replace(
      /^mariadb:/i,
      'mysql:',
    );
    return { connection, ...options };
  },

  zookeeper: (url, backend, shown) => {
    const parts = splitUrl(url, shown);
    if (parts.hosts.length === 0) {
      throw new InvalidArgumentError(`A ZooKeeper URL needs at least one host: ${shown}`);
    }
    const { options } = splitQuery(parts.query, backend, shown);
    const hosts = parts.hosts.map((host) => withPort(host, 2181, shown)).join(',');
    const chroot = parts.path === '/' ? '' : parts.path;
    const auth =
      parts.userInfo === ''
        ? {}
        : { auth: [{ scheme: 'digest', auth: decodeUserInfo(parts.userInfo, shown) }] };
    return { connectionString: hosts + chroot, ...auth, ...options };
  },

  etcd: (url, backend, shown) => {
    const parts = splitUrl(url, shown);
    if (parts.hosts.length === 0) {
      throw new InvalidArgumentError(`An etcd URL needs at least one host: ${shown}`);
    }
    const { options } = splitQuery(parts.query, backend, shown);
    const scheme = parts.scheme === 'etcds' ? 'https://' : '';
    const hosts = parts.hosts.map((host) => scheme + withPort(host, 2379, shown));
    const path = decodePart(parts.path, shown);
    const keyPrefix =
      path === '' || path === '/' ? {} : { keyPrefix: path.endsWith('/') ? path : `${path}/` };
    const auth = parts.userInfo === '' ? {} : { auth: etcdUser(parts.userInfo, shown) };
    return { hosts, ...keyPrefix, ...auth, ...options };
  },
};

function decodePart(text: string, shown: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new InvalidArgumentError(`Malformed percent-encoding in ${shown}`);
  }
}

function etcdUser(userInfo: string, shown: string): { username: string; password: string } {
  const colon = userInfo.indexOf(':');
  if (colon < 0) {
    throw new InvalidArgumentError(
      `An etcd URL's user needs a password (user:password@…): ${shown}`,
    );
  }
  return {
    username: decodePart(userInfo.slice(0, colon), shown),
    password: decodePart(userInfo.slice(colon + 1), shown),
  };
}

/** The URL with lockkit's parameters removed, checked by WHATWG `URL`. */
function checkedUrl(url: string, query: string, clientQuery: string, shown: string): string {
  const base = query === '' ? url.replace(/\?$/, '') : url.slice(0, url.length - query.length - 1);
  const connection = base + clientQuery;
  let parsed: URL;
  try {
    parsed = new URL(connection);
  } catch {
    throw new InvalidArgumentError(`Not a valid URL: ${shown}`);
  }
  if (parsed.hash !== '') throw new InvalidArgumentError(`A lock URL has no #fragment: ${shown}`);
  return connection;
}

function decodeUserInfo(userInfo: string, shown: string): string {
  const colon = userInfo.indexOf(':');
  try {
    if (colon < 0) return decodeURIComponent(userInfo);
    return `${decodeURIComponent(userInfo.slice(0, colon))}:${decodeURIComponent(userInfo.slice(colon + 1))}`;
  } catch {
    throw new InvalidArgumentError(`Malformed percent-encoding in the user info of ${shown}`);
  }
}
