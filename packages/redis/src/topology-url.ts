import { InvalidArgumentError } from '@lockkit/core';

/** host and port of a seed node or a Sentinel. */
export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** A Redis Cluster given by seed nodes (`redis+cluster://…`). */
export interface ClusterTopology {
  readonly kind: 'cluster';
  readonly seeds: readonly HostPort[];
  readonly username?: string;
  readonly password?: string;
}

/** A Sentinel-managed primary (`redis+sentinel://…/<masterName>[/<db>]`). */
export interface SentinelTopology {
  readonly kind: 'sentinel';
  readonly sentinels: readonly HostPort[];
  readonly masterName: string;
  readonly db: number;
  readonly username?: string;
  readonly password?: string;
  readonly sentinelUsername?: string;
  readonly sentinelPassword?: string;
}

export type Topology = ClusterTopology | SentinelTopology;

const topologyScheme = /^redis\+(cluster|sentinel):\/\//i;

/** Whether `url` names a Cluster or a Sentinel setup (then {@link parseTopologyUrl} applies). */
export function isTopologyUrl(url: string): boolean {
  return topologyScheme.test(url);
}

/**
 * Parses `redis+cluster://[user[:password]@]host[:port][,host[:port]…][/]` (port 6379) or
 * `redis+sentinel://[user[:password]@]host[:port][,…]/<masterName>[/<db>][?sentinelUsername=…&sentinelPassword=…]`
 * (port 26379; the user and password are the primary's, the query's are the Sentinels').
 * Throws InvalidArgumentError naming `where` (the password is never shown).
 */
export function parseTopologyUrl(url: string, where: string): Topology {
  const match =
    /^redis\+(cluster|sentinel):\/\/(?:([^@/?#]*)@)?([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?$/i.exec(url);
  if (!match)
    throw new InvalidArgumentError(`${where} is not a valid Redis Cluster or Sentinel URL`);
  const [, kindText = '', userInfo, hostList = '', path = '', query = ''] = match;
  const kind = kindText.toLowerCase() as Topology['kind'];
  const defaultPort = kind === 'cluster' ? 6379 : 26379;
  const hosts = hostList === '' ? [] : hostList.split(',');
  if (hosts.length === 0) {
    throw new InvalidArgumentError(
      `${where} needs at least one ${kind === 'cluster' ? 'seed node' : 'Sentinel'}`,
    );
  }
  const nodes = hosts.map((host) => hostPort(host, defaultPort, where));
  const credentials = userInfo === undefined ? {} : userOf(userInfo, where);
  const parameters = queryOf(query, where);
  const segments = path.split('/').filter((segment) => segment !== '');
  if (kind === 'cluster') {
    if (segments.length > 0) {
      throw new InvalidArgumentError(`${where}: a Redis Cluster has only database 0 (no /path)`);
    }
    rejectUnknown(parameters, [], where);
    return Object.freeze({ kind, seeds: nodes, ...credentials });
  }
  const [masterName, dbText, ...rest] = segments.map((segment) => decode(segment, where));
  if (masterName === undefined || rest.length > 0) {
    throw new InvalidArgumentError(
      `${where} must name the master: redis+sentinel://host:port/<masterName>[/<db>]`,
    );
  }
  const db = dbText === undefined ? 0 : Number(dbText);
  if (!/^\d{1,5}$/.test(dbText ?? '0')) {
    throw new InvalidArgumentError(`${where}: the database after the master name must be a number`);
  }
  rejectUnknown(parameters, ['sentinelUsername', 'sentinelPassword'], where);
  return Object.freeze({
    kind,
    sentinels: nodes,
    masterName,
    db,
    ...credentials,
    ...(parameters.has('sentinelUsername') && {
      sentinelUsername: parameters.get('sentinelUsername') as string,
    }),
    ...(parameters.has('sentinelPassword') && {
      sentinelPassword: parameters.get('sentinelPassword') as string,
    }),
  });
}

function hostPort(text: string, defaultPort: number, where: string): HostPort {
  const match = /^(\[[0-9a-f:.]+\]|[^\s:[\]]+)(?::(\d{1,5}))?$/i.exec(text);
  const port = match?.[2] === undefined ? defaultPort : Number(match[2]);
  if (!match || port < 1 || port > 65_535) {
    throw new InvalidArgumentError(`${where}: "${text}" is not host[:port]`);
  }
  const host = (match[1] as string).replace(/^\[(.*)\]$/, '$1');
  return Object.freeze({ host, port });
}

function userOf(userInfo: string, where: string): { username?: string; password?: string } {
  const colon = userInfo.indexOf(':');
  const username = decode(colon < 0 ? userInfo : userInfo.slice(0, colon), where);
  const password = colon < 0 ? undefined : decode(userInfo.slice(colon + 1), where);
  return {
    ...(username !== '' && { username }),
    ...(password !== undefined && { password }),
  };
}

function queryOf(query: string, where: string): Map<string, string> {
  const parameters = new Map<string, string>();
  for (const segment of query.split('&')) {
    if (segment === '') continue;
    const equals = segment.indexOf('=');
    const key = decode(equals < 0 ? segment : segment.slice(0, equals), where);
    if (parameters.has(key)) throw new InvalidArgumentError(`${where}: "${key}" is given twice`);
    parameters.set(key, equals < 0 ? '' : decode(segment.slice(equals + 1), where));
  }
  return parameters;
}

function rejectUnknown(
  parameters: Map<string, string>,
  known: readonly string[],
  where: string,
): void {
  for (const key of parameters.keys()) {
    if (!known.includes(key)) {
      const takes = known.length === 0 ? 'no query parameters' : `only ${known.join(', ')}`;
      throw new InvalidArgumentError(
        `${where}: unknown query parameter "${key}" (this URL takes ${takes}; provider options go in the options object)`,
      );
    }
  }
}

function decode(text: string, where: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new InvalidArgumentError(`${where}: malformed percent-encoding`);
  }
}
