/** Which primitive a command takes or inspects. */
export type LockTarget =
  | { readonly kind: 'mutex' }
  | { readonly kind: 'read' }
  | { readonly kind: 'write' }
  | { readonly kind: 'semaphore'; readonly maxCount: number };

/** The sub-commands. */
export type CommandName = 'run' | 'elect' | 'inspect' | 'force-release' | 'demo';

/** `lockkit run`. */
export interface RunCommand {
  readonly command: 'run';
  /** The lock URL, from the command line, `--url-file` or `LOCKKIT_URL`. */
  readonly url: string;
  readonly name: string;
  readonly target: LockTarget;
  /** ms to wait for the lock (`Infinity`: forever; 0: one attempt). */
  readonly timeoutMs: number;
  /** Exit status when the lock could not be taken in time (`--conflict-exit-code`; 75). */
  readonly conflictExitCode: number;
  /** ms between SIGTERM and SIGKILL when the lock is lost. */
  readonly killAfterMs: number;
  readonly verbose: boolean;
  /** The program and its arguments: what follows `--`, or `/bin/sh -c <string>` for `-c`. */
  readonly argv: readonly [string, ...string[]];
}

/** `lockkit elect`. */
export interface ElectCommand {
  readonly command: 'elect';
  /** The lock URL, from the command line, `--url-file` or `LOCKKIT_URL`. */
  readonly url: string;
  /** The election's name (its mutex is `election:<name>`). */
  readonly name: string;
  /** The owner label (`--owner`); `undefined`: `<hostname>:<pid>`. */
  readonly owner: string | undefined;
  /** ms between SIGTERM and SIGKILL when leadership is lost. */
  readonly killAfterMs: number;
  /** `--once`: after a lost leadership, exit 76 instead of campaigning again. */
  readonly once: boolean;
  readonly verbose: boolean;
  /** The program and its arguments: what follows `--`, or `/bin/sh -c <string>` for `-c`. */
  readonly argv: readonly [string, ...string[]];
}

/** `lockkit inspect`. */
export interface InspectCommand {
  readonly command: 'inspect';
  /** The lock URL, from the command line, `--url-file` or `LOCKKIT_URL`. */
  readonly url: string;
  readonly name: string;
  readonly target: LockTarget;
  readonly json: boolean;
}

/** `lockkit force-release`. */
export interface ForceReleaseCommand {
  readonly command: 'force-release';
  /** The lock URL, from the command line, `--url-file` or `LOCKKIT_URL`. */
  readonly url: string;
  readonly name: string;
  readonly target: LockTarget;
  /** `--yes`: the operator confirmed; without it the command refuses (exit 64). */
  readonly yes: boolean;
  readonly json: boolean;
}

/** `lockkit demo`. */
export interface DemoCommand {
  readonly command: 'demo';
  readonly url: string | undefined;
}

/** What the command line asks for. */
export type Invocation =
  | { readonly command: 'help'; readonly topic: CommandName | undefined }
  | { readonly command: 'version' }
  | RunCommand
  | ElectCommand
  | InspectCommand
  | ForceReleaseCommand
  | DemoCommand;

/** The environment variables lockkit reads (`process.env` by default). */
export type Environment = Readonly<Record<string, string | undefined>>;
