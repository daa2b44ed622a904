import type { Connection } from 'mysql2';

/** Where connections come from and go back to (own connections or an injected pool). */
export interface ConnectionSource {
  /** Where sessions go (`host:port` or socket path), for error messages. */
  readonly address: string;
  /**
   * True for the provider's own connections: their sockets keep the process alive only
   * while statements are in flight. A pool's connections are left as the pool has them.
   */
  readonly owned: boolean;
  open(): Promise<Connection>;
  /** Ends an own connection / hands a borrowed one back (`healthy`) or destroys it. */
  dispose(raw: Connection, healthy: boolean): Promise<void>;
}

/** Keepalive settings of a lock connection. */
export interface KeepaliveSettings {
  readonly intervalMs: number;
  readonly timeoutMs: number;
}
