/**
 * Racing an acquire's attempt (or its watch) against the acquire's controller: the caller's
 * signal, the deadline, the provider's close. A value the attempt produces after it lost the
 * race goes to `onLate` (a late grant is released).
 */

/** The reason an acquire's controller aborts with when its deadline passes. */
export const timedOut: unique symbol = Symbol('lockkit.timed-out');

/**
 * The controller of one acquire. Node builds an AbortController's signal on first use, so
 * this one keeps its own aborted state and a callback for {@link raceAbort}, and the signal
 * is only built when a backend or a wait reads it (or when it aborts).
 */
export class WaitController extends AbortController {
  aborted = false;
  reason: unknown;
  /** Called once on abort (the attempt or watch being raced), if set. */
  onAbort: (() => void) | undefined;

  override abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    super.abort(reason);
    this.reason = this.signal.reason; // as the signal has it (a default AbortError for none)
    this.onAbort?.();
  }
}

/**
 * Resolves like `work`, or rejects with the controller's reason when it aborts first. A value
 * `work` produces after that goes to `onLate` (so a late grant is released, never leaked).
 */
export function raceAbort<T>(
  work: Promise<T>,
  controller: WaitController,
  onLate: (value: NonNullable<T>) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    if (controller.aborted) {
      settled = true;
      reject(controller.reason);
    } else {
      controller.onAbort = () => {
        settled = true;
        reject(controller.reason);
      };
    }
    work.then(
      (value) => {
        controller.onAbort = undefined;
        if (!settled) resolve(value);
        else if (value != null) onLate(value);
      },
      (error: unknown) => {
        controller.onAbort = undefined;
        if (!settled) reject(error);
      },
    );
  });
}
