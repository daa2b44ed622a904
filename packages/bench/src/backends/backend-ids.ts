/** The backends the bench and the chaos run cover, in the order they report them. */
export const backendIds = [
  'redis',
  'redlock',
  'postgres',
  'mysql',
  'zookeeper',
  'etcd',
  'file',
] as const;

/** One of {@link backendIds}. `redlock` is the Redis backend over several independent nodes. */
export type BackendId = (typeof backendIds)[number];

/** Whether `name` is a {@link BackendId}. */
export function isBackendId(name: string): name is BackendId {
  return (backendIds as readonly string[]).includes(name);
}

/** How a backend is called in tables. */
export const backendLabels: Readonly<Record<BackendId, string>> = {
  redis: 'Redis (1 node)',
  redlock: 'Redis Redlock',
  postgres: 'PostgreSQL',
  mysql: 'MariaDB',
  zookeeper: 'ZooKeeper',
  etcd: 'etcd',
  file: 'file system',
};
