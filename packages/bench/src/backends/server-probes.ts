import type { ServerHandle } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { BackendId } from './backend-ids.js';
import { establishedConnections, etcdVersion } from './etcd-probes.js';
import { fourLetterWord } from './four-letter-word.js';

/** The server software and version behind a backend, e.g. "PostgreSQL 15.8". */
export async function serverVersion(
  backend: BackendId,
  servers: readonly ServerHandle[],
): Promise<string> {
  const server = servers[0];
  if (!server) return 'none (local file system)';
  switch (server.kind) {
    case 'redis': {
      const client = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await client.connect();
        const info = await client.info('server');
        const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '?';
        if (backend === 'redlock') return `Redis ${version} × ${servers.length} independent nodes`;
        if (backend.startsWith('redis-cluster'))
          return `Redis ${version} Cluster, ${servers.length / 2} primaries with a replica each`;
        if (backend.startsWith('redis-sentinel'))
          return `Redis ${version}, a primary and ${servers.length - 1} replicas under 3 Sentinels`;
        return `Redis ${version}`;
      } finally {
        client.disconnect();
      }
    }
    case 'postgres': {
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      try {
        const result = await client.query<{ server_version: string }>('SHOW server_version');
        return `PostgreSQL ${result.rows[0]?.server_version ?? '?'}`;
      } finally {
        await client.end();
      }
    }
    case 'mariadb': {
      const connection = await mysql.createConnection(server.url);
      try {
        const [rows] = await connection.query('SELECT VERSION() AS version');
        const version = (rows as { version: string }[])[0]?.version ?? '?';
        return `MariaDB ${version.replace(/-MariaDB.*$/, '')}`;
      } finally {
        await connection.end();
      }
    }
    case 'zookeeper': {
      const reply = await fourLetterWord(server.host, server.port, 'srvr');
      const version = /Zookeeper version: ([^-,\s]+)/.exec(reply)?.[1] ?? '?';
      return `ZooKeeper ${version}`;
    }
    case 'etcd': {
      const version = await etcdVersion(server.host, server.port);
      return servers.length > 1 ? `${version} × ${servers.length} members` : version;
    }
  }
}

/**
 * Client connections the server has open right now, not counting the probe's own: Redis
 * `CLIENT LIST`, PostgreSQL `pg_stat_activity`, MariaDB `PROCESSLIST`, ZooKeeper `cons`,
 * etcd: the kernel's table of established connections to its client port.
 */
export async function clientConnections(server: ServerHandle): Promise<number> {
  switch (server.kind) {
    case 'redis': {
      const client = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await client.connect();
        const list = (await client.client('LIST')) as string;
        return list.split('\n').filter((line) => line.trim() !== '').length - 1;
      } finally {
        client.disconnect();
      }
    }
    case 'postgres': {
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      try {
        const result = await client.query<{ count: string }>(
          `SELECT count(*) AS count FROM pg_stat_activity
            WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
        );
        return Number(result.rows[0]?.count ?? 0);
      } finally {
        await client.end();
      }
    }
    case 'mariadb': {
      const connection = await mysql.createConnection(server.url);
      try {
        const [rows] = await connection.query(
          `SELECT COUNT(*) AS count FROM information_schema.PROCESSLIST
            WHERE ID <> CONNECTION_ID() AND COMMAND NOT IN ('Daemon', 'Binlog Dump')
              AND USER NOT IN ('system user', 'event_scheduler')`,
        );
        return Number((rows as { count: number }[])[0]?.count ?? 0);
      } finally {
        await connection.end();
      }
    }
    case 'zookeeper': {
      const reply = await fourLetterWord(server.host, server.port, 'cons');
      // One line per connection, the probe's own included.
      return reply.split('\n').filter((line) => line.trim().startsWith('/')).length - 1;
    }
    case 'etcd':
      return establishedConnections(server.port);
  }
}
