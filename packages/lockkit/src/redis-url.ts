import { InvalidArgumentError } from '@lockkit/core';
import type { BackendInfo } from './backends.js';
import { splitUrl, withPort } from './url-authority.js';
import { splitQuery } from './url-query.js';

/**
 * The `nodes` (and query options) of a Redis URL:
 * - `redis://h[:p][/db]`, `rediss://…`: one node; several comma-separated hosts are the nodes
 *   of a Redlock (each gets the URL's credentials, database and client query);
 * - `redis+cluster://h1[:p1],h2[:p2]`: one Redis Cluster, the hosts are seed nodes (port 6379);
 * - `redis+sentinel://s1[:p1],s2[:p2]/<masterName>[/db]`: the primary the Sentinels name
 *   (port 26379).
 * A Cluster or Sentinel URL is passed to `@lockkit/redis` as one node, which checks the rest.
 */
export function redisNodes(
  url: string,
  backend: BackendInfo,
  shown: string,
): Record<string, unknown> {
  const parts = splitUrl(url, shown);
  if (parts.hosts.length === 0) {
    throw new InvalidArgumentError(`A Redis URL needs at least one host: ${shown}`);
  }
  const { options, clientQuery } = splitQuery(parts.query, backend, shown);
  const userInfo = parts.userInfo === '' ? '' : `${parts.userInfo}@`;
  const topology = /^redis\+(cluster|sentinel)$/.exec(parts.scheme)?.[1];
  if (topology !== undefined) {
    const port = topology === 'cluster' ? 6379 : 26379;
    const hosts = parts.hosts.map((host) => withPort(host, port, shown)).join(',');
    const path = parts.path === '/' ? '' : parts.path;
    if (topology === 'cluster' && path !== '') {
      throw new InvalidArgumentError(`A Redis Cluster URL has no path (only database 0): ${shown}`);
    }
    if (topology === 'sentinel' && !/^\/[^/]+(\/\d+)?\/?$/.test(path)) {
      throw new InvalidArgumentError(
        `A Redis Sentinel URL names the master: redis+sentinel://host:26379/<masterName>[/<db>], got ${shown}`,
      );
    }
    return { nodes: `${parts.scheme}://${userInfo}${hosts}${path}${clientQuery}`, ...options };
  }
  const nodes = parts.hosts.map((host) => {
    const node = `${parts.scheme}://${userInfo}${withPort(host, 6379, shown)}${parts.path}${clientQuery}`;
    try {
      new URL(node);
    } catch {
      throw new InvalidArgumentError(`Not a valid Redis URL for host "${host}": ${shown}`);
    }
    return node;
  });
  return { nodes: nodes.length === 1 ? nodes[0] : nodes, ...options };
}
