/** The reason an acquire's controller aborts with when its deadline passes. */
export const timedOut: unique symbol = Symbol('lockkit.timed-out');

/**
 * Resolves like `work`, or rejects with `signal.reason` when `signal` aborts first. A value
 * `work` produces after that goes to `onLate`, so a late grant is released, never leaked.
 */
export function raceAbort<T>(
  work: Promise<T>,
  signal: AbortSignal,
  onLate: (value: NonNullable<T>) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let lost = false;
    const onAbort = (): void => {
      lost = true;
      reject(signal.reason);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (!lost) resolve(value);
        else if (value != null) onLate(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (!lost) reject(error);
      },
    );
  });
}
