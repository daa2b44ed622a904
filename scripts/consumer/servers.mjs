// Starts the throwaway servers the consumer test's apps talk to (Redis ×3 for a Redlock URL,
// PostgreSQL, MariaDB, ZooKeeper, etcd) with the workspace's @lockkit/testkit, prints their URLs
// as one JSON line, and stops them all when stdin closes or on SIGTERM/SIGINT.
import { startServers } from '../../packages/testkit/dist/index.js';

const servers = await startServers({
  redis: 3,
  postgres: true,
  mariadb: true,
  zookeeper: true,
  etcd: true,
});
const { redisUrls, postgresUrl, mysqlUrl, zookeeperUrl, etcdUrl } = servers.describe();
process.stdout.write(
  `${JSON.stringify({ redisUrls, postgresUrl, mysqlUrl, zookeeperUrl, etcdUrl })}\n`,
);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  servers.stop().then(
    () => process.exit(0),
    (error) => {
      console.error('consumer-test servers: stop failed', error);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
