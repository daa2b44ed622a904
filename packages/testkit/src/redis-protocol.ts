import { exchange } from './socket-exchange.js';

/** A Redis reply: simple or bulk string, integer, nil, array, or an error reply. */
export type RedisReply = string | number | null | RedisReplyError | RedisReply[];

/** An error reply (`-ERR …`) from Redis. */
export class RedisReplyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedisReplyError';
  }
}

function encodeCommand(command: readonly string[]): string {
  let encoded = `*${command.length}\r\n`;
  for (const part of command) encoded += `$${Buffer.byteLength(part)}\r\n${part}\r\n`;
  return encoded;
}

/** Parses one reply at `offset`; `undefined` when more bytes are needed. */
function parseReply(buffer: Buffer, offset: number): [RedisReply, number] | undefined {
  const lineEnd = buffer.indexOf('\r\n', offset);
  if (lineEnd === -1) return undefined;
  const type = String.fromCharCode(buffer[offset] ?? 0);
  const line = buffer.toString('utf8', offset + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case '+':
      return [line, next];
    case '-':
      return [new RedisReplyError(line), next];
    case ':':
      return [Number(line), next];
    case '$': {
      const length = Number(line);
      if (length < 0) return [null, next];
      if (buffer.length < next + length + 2) return undefined;
      return [buffer.toString('utf8', next, next + length), next + length + 2];
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return [null, next];
      const items: RedisReply[] = [];
      let position = next;
      for (let index = 0; index < count; index += 1) {
        const parsed = parseReply(buffer, position);
        if (parsed === undefined) return undefined;
        items.push(parsed[0]);
        position = parsed[1];
      }
      return [items, position];
    }
    default:
      throw new Error(`unexpected Redis reply type ${JSON.stringify(type)}`);
  }
}

/**
 * Sends `commands` pipelined on a fresh connection and returns one reply per command.
 * Error replies are returned as {@link RedisReplyError} values, not thrown.
 */
export function sendRedisCommands(
  host: string,
  port: number,
  commands: readonly (readonly string[])[],
  timeoutMs: number,
): Promise<RedisReply[]> {
  const request = Buffer.from(commands.map(encodeCommand).join(''));
  return exchange(host, port, request, timeoutMs, (received) => {
    const replies: RedisReply[] = [];
    let position = 0;
    while (replies.length < commands.length) {
      const parsed = parseReply(received, position);
      if (parsed === undefined) return undefined;
      replies.push(parsed[0]);
      position = parsed[1];
    }
    return replies;
  });
}
