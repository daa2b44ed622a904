/**
 * `promise`, or a rejection once `timeoutMs` passed first (a server that accepted the
 * connection but does not answer); a value that comes later is handed to `late`.
 */
export function settleWithin<T>(
  promise: Promise<T>,
  timeoutMs: number,
  late: (value: T) => void,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    promise.then(
      (value) => {
        clearTimeout(timer);
        if (timedOut) late(value);
        else resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
