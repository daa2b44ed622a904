import { connect } from 'node:net';

/** Sends a ZooKeeper four-letter-word command (`srvr`, `mntr`, `cons`) and returns the reply. */
export function fourLetterWord(
  host: string,
  port: number,
  word: string,
  timeoutMs = 2000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`${word}: no reply`)));
    socket.on('connect', () => socket.write(word));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}
