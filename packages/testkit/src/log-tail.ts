import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** The last `lineCount` lines of a log file (at most 16 KiB), or a note when it cannot be read. */
export function readLogTail(logPath: string, lineCount = 30): string {
  let fd: number | undefined;
  try {
    fd = openSync(logPath, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(size, 16_384);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    const lines = buffer.toString('utf8').trimEnd().split('\n');
    return lines.slice(-lineCount).join('\n');
  } catch (error) {
    return `(could not read ${logPath}: ${(error as Error).message})`;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Formats a log tail for an error message. */
export function describeLogTail(logPath: string): string {
  return `Last lines of ${logPath}:\n${readLogTail(logPath)
    .split('\n')
    .map((line) => `  | ${line}`)
    .join('\n')}`;
}
