/** The service's configuration, from the environment. */
export interface AppConfig {
  /** Where the locks live, e.g. `postgres://…`, `redis://…`, `file:///var/lock/shop`. */
  readonly lockUrl: string;
  /** The stock file (a stand-in for the database the service sells from). */
  readonly stockFile: string;
  /** Port to listen on (0: any free port). */
  readonly port: number;
  /** Milliseconds between reading the stock and writing it back (widens the race window). */
  readonly thinkMs: number;
  /** How long a purchase waits for the lock before answering 423 (busy). */
  readonly lockTimeoutMs: number;
  /** Where the scheduled stock report goes (a JSON file, fenced by the leader's epoch). */
  readonly reportFile: string;
  /** Milliseconds between two stock reports (run by the elected instance only). */
  readonly reportIntervalMs: number;
  /** This instance's name in the leader election; `undefined`: `<hostname>:<pid>`. */
  readonly instanceName: string | undefined;
}

/** Injection token of {@link AppConfig}. */
export const APP_CONFIG: unique symbol = Symbol('APP_CONFIG');

/** Reads {@link AppConfig} from `env`; throws when a required variable is missing. */
export function readConfig(env: NodeJS.ProcessEnv): AppConfig {
  const lockUrl = env['LOCK_URL'];
  const stockFile = env['STOCK_FILE'];
  if (!lockUrl) throw new Error('Set LOCK_URL to a lock URL, e.g. file:///tmp/shop-locks');
  if (!stockFile) throw new Error('Set STOCK_FILE to the stock file');
  return {
    lockUrl,
    stockFile,
    port: Number(env['PORT'] ?? 3000),
    thinkMs: Number(env['THINK_MS'] ?? 2),
    lockTimeoutMs: Number(env['LOCK_TIMEOUT_MS'] ?? 10_000),
    reportFile: env['REPORT_FILE'] ?? `${stockFile}.reports.json`,
    reportIntervalMs: Number(env['REPORT_INTERVAL_MS'] ?? 60_000),
    instanceName: env['INSTANCE_NAME'] || undefined,
  };
}
