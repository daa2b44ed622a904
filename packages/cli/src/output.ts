/** Where the command writes: stdout for results, stderr for lockkit's own messages. */
export interface Output {
  /** A line of results (stdout). */
  print(line: string): void;
  /** A line about lockkit itself (stderr), prefixed with `lockkit: `. */
  say(line: string): void;
}

/** The process's own stdout and stderr. */
export const processOutput: Output = {
  print: (line) => {
    process.stdout.write(`${line}\n`);
  },
  say: (line) => {
    process.stderr.write(`lockkit: ${line}\n`);
  },
};
