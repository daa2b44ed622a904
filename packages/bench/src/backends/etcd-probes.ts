import { readFile } from 'node:fs/promises';
import { get } from 'node:http';

/** etcd's version, from `GET /version` on its client port. */
export function etcdVersion(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = get(
      { host, port, path: '/version', timeout: 5000, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          try {
            const { etcdserver } = JSON.parse(Buffer.concat(chunks).toString()) as {
              etcdserver?: string;
            };
            resolve(`etcd ${etcdserver ?? '?'}`);
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error('etcd /version: no answer in 5 s')));
    request.on('error', reject);
  });
}

/**
 * Established TCP connections to the local `port` (etcd lists no clients itself), read from
 * the kernel's tables, so the probe opens no connection of its own.
 */
export async function establishedConnections(port: number): Promise<number> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let count = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state === '01' && local?.endsWith(`:${hexPort}`)) count += 1;
    }
  }
  return count;
}
