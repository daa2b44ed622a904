/** A command line lockkit cannot act on; `main` prints it with a hint and exits with 64. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
