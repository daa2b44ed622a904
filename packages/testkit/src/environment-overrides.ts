import type { ServerKind } from './server-handle.js';

/** The environment variable that points the tests at an existing server, per kind. */
export const environmentVariables: Readonly<Record<ServerKind, string>> = {
  redis: 'LOCKKIT_REDIS_URLS',
  postgres: 'LOCKKIT_POSTGRES_URL',
  mariadb: 'LOCKKIT_MYSQL_URL',
  zookeeper: 'LOCKKIT_ZOOKEEPER_URL',
  etcd: 'LOCKKIT_ETCD_URL',
};

const defaultPorts: Readonly<Record<ServerKind, number>> = {
  redis: 6379,
  postgres: 5432,
  mariadb: 3306,
  zookeeper: 2181,
  etcd: 2379,
};

/** A server given through the environment. */
export interface EnvironmentServer {
  readonly kind: ServerKind;
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly environmentVariable: string;
}

/** Splits a URL into host and port (the kind's standard port when the URL has none). */
export function parseServerUrl(kind: ServerKind, url: string): { host: string; port: number } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${environmentVariables[kind]}: "${url}" is not a URL`);
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = parsed.port === '' ? defaultPorts[kind] : Number(parsed.port);
  return { host, port };
}

/**
 * The servers the environment gives for `kind`, or `undefined` when its variable is unset or
 * empty. `LOCKKIT_REDIS_URLS` may list several comma-separated URLs.
 */
export function serversFromEnvironment(
  kind: ServerKind,
  environment: NodeJS.ProcessEnv = process.env,
): EnvironmentServer[] | undefined {
  const environmentVariable = environmentVariables[kind];
  const value = environment[environmentVariable]?.trim();
  if (value === undefined || value === '') return undefined;
  const urls = kind === 'redis' ? value.split(',').map((url) => url.trim()) : [value];
  return urls
    .filter((url) => url !== '')
    .map((url) => ({ kind, url, environmentVariable, ...parseServerUrl(kind, url) }));
}
