/**
 * Keeps the process alive until the returned function is called. A wait for a lock may rest
 * on unref'd timers and watchers only (core's safety poll does not hold the process open);
 * a command-line process must not exit from under such a wait.
 */
export function keepAlive(): () => void {
  const timer = setInterval(() => {}, 2 ** 30);
  return () => clearInterval(timer);
}
