/**
 * Exit codes of the `lockkit` command. The command's own exit status is passed through
 * unchanged; lockkit's own outcomes use codes from `sysexits.h` where one fits, so they are
 * unlikely to be confused with a command's usual 0/1/2.
 */
export const exitCodes: {
  readonly ok: 0;
  readonly usage: 64;
  readonly noInput: 66;
  readonly unavailable: 69;
  readonly internal: 70;
  readonly timeout: 75;
  readonly lost: 76;
  readonly cannotExecute: 126;
  readonly notFound: 127;
  readonly signalBase: 128;
} = Object.freeze({
  /** Success (also: the command's own status, passed through). */
  ok: 0,
  /** Bad usage: unknown option, missing argument, malformed URL or option value (EX_USAGE). */
  usage: 64,
  /** `--url-file` cannot be read, or holds no URL (EX_NOINPUT). */
  noInput: 66,
  /** The backend cannot be used: server unreachable, or its package not installed (EX_UNAVAILABLE). */
  unavailable: 69,
  /** An unexpected failure inside lockkit (EX_SOFTWARE). */
  internal: 70,
  /**
   * The lock was not acquired within `--timeout`/`--wait`, or at once with `--nonblock`
   * (EX_TEMPFAIL: try again later); `--conflict-exit-code` chooses another.
   */
  timeout: 75,
  /** The lock was lost while the command ran; the command was signalled. */
  lost: 76,
  /** The command exists but could not be executed (like a shell's 126). */
  cannotExecute: 126,
  /** The command was not found (like a shell's 127). */
  notFound: 127,
  /** Killed by signal n → 128 + n (130 for SIGINT, 143 for SIGTERM). */
  signalBase: 128,
});
