/**
 * Runs a command's `main` and ends the process with its outcome: exit 0, or the error printed
 * and exit 1 (servers, clients and timers it left behind do not keep it alive).
 */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
