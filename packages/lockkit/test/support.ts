import { inject } from 'vitest';

/** The throwaway servers the global setup started (or the LOCKKIT_*_URL ones). */
export function serverUrls(): {
  readonly redis: readonly string[];
  readonly postgres: string;
  readonly mysql: string;
  readonly zookeeper: string;
  readonly etcd: string;
} {
  const servers = inject('lockkitServers');
  const { postgresUrl, mysqlUrl, zookeeperUrl, etcdUrl } = servers;
  if (servers.redisUrls.length < 3 || !postgresUrl || !mysqlUrl || !zookeeperUrl || !etcdUrl) {
    throw new Error('the global setup did not start every server this suite needs');
  }
  return {
    redis: servers.redisUrls,
    postgres: postgresUrl,
    mysql: mysqlUrl,
    zookeeper: zookeeperUrl,
    etcd: etcdUrl,
  };
}

/** `url` with its scheme replaced (`mysql://…` → `mariadb://…`). */
export function withScheme(url: string, scheme: string): string {
  return url.replace(/^[a-z]+:/i, `${scheme}:`);
}

/** `redis://a:1`, `redis://b:2` → `redis://a:1,b:2` (the Redlock URL form). */
export function redlockUrl(nodeUrls: readonly string[]): string {
  const hosts = nodeUrls.map((url) => new URL(url).host);
  return `redis://${hosts.join(',')}`;
}
