import { createServer } from 'node:net';

/** Ports handed out recently by this process, so parallel starts never get the same one. */
const recentlyHandedOut = new Set<number>();

function bindEphemeralPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A TCP port that was free on `host` a moment ago (found by binding port 0).
 *
 * Another process can still take it before the server binds it: servers are started with a
 * retry on "address already in use".
 */
export async function findFreePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const port = await bindEphemeralPort(host);
    if (port !== 0 && !recentlyHandedOut.has(port)) {
      recentlyHandedOut.add(port);
      if (recentlyHandedOut.size > 1000) recentlyHandedOut.clear();
      return port;
    }
  }
  throw new Error(`Could not find a free TCP port on ${host}`);
}
