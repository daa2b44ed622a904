/** The faults the chaos run injects. */
export type FaultKind =
  /** SIGKILL a worker that holds a lock (a replacement worker is started). */
  | 'kill-holder'
  /** SIGSTOP a worker that holds a lock for longer than its lease/session, then SIGCONT. */
  | 'stop-holder'
  /** Close every client connection server-side (ZooKeeper: close every session; etcd: revoke every lease). */
  | 'drop-connections'
  /** SIGSTOP the server past the lost-detection bound, then SIGCONT. */
  | 'pause-server'
  /** Graceful server restart (same port and data). */
  | 'restart-server'
  /** SIGKILL the server, then start it again (crash recovery). */
  | 'kill-server'
  /** Redlock: SIGSTOP 2 of the 5 nodes, then SIGCONT. */
  | 'pause-minority'
  /** Redlock: SIGKILL 2 of the 5 nodes, keep them down longer than a lease, restart them empty. */
  | 'kill-minority'
  // `pnpm chaos --faults network` (workers in network namespaces, see chaos-network.ts):
  /** Cut a holder's namespace off from every server (nftables drop), both keep running; heal. */
  | 'partition-holder'
  /** Redlock: cut a holder off from 2 of the 5 nodes; heal. */
  | 'partition-minority'
  /** Redlock: cut a holder off from 3 of the 5 nodes; heal. */
  | 'partition-majority'
  /** ZooKeeper ensemble: cut off the follower a holder's session is on (link down); heal. */
  | 'partition-follower'
  /** Drop 30 % of a holder's packets at random (nftables numgen); heal. */
  | 'lossy-holder'
  /** Every server link holds each chunk (userspace relay: no sch_netem here); then not. */
  | 'delay-server'
  // `pnpm chaos --faults clock` (every worker under libfaketime, see chaos-clock-faults.ts):
  /** A holder's wall clock jumps 60 s back (its monotonic clock does not); then right again. */
  | 'clock-back-holder'
  /** A worker's wall clock jumps 60 s ahead while others hold; then right again. */
  | 'clock-ahead-contender'
  /** Every server of the backend: its wall clock 60 s ahead while a worker holds; then right. */
  | 'clock-ahead-server'
  /** Every server of the backend: its wall clock 60 s back while a worker holds; then right. */
  | 'clock-back-server'
  /** Cluster/Sentinel: SIGKILL the primary of a chaos lock at a grant; its replica is promoted. */
  | 'kill-primary'
  /** Cluster/Sentinel: CLUSTER FAILOVER / SENTINEL FAILOVER of a chaos lock's primary. */
  | 'failover'
  /** Cluster: move a chaos lock's slot to another primary (SETSLOT, MIGRATE) during grants. */
  | 'reshard'
  /** Cluster: replication cut, primary killed at a grant, the lagging replica takes over. */
  | 'lagging-takeover';

/** One injected fault, as the analysis needs it. All times are CLOCK_MONOTONIC ms. */
export interface FaultWindow {
  readonly kind: FaultKind;
  /** What exactly was done, for the report. */
  readonly description: string;
  readonly startedAt: number;
  /** When the fault was over (server back, process resumed or dead, connections dropped). */
  readonly clearedAt: number;
  /** Worker pids the fault hit; undefined for server faults (they hit every worker). */
  readonly pids: readonly number[] | undefined;
  /** How long after `clearedAt` every lock must be granted again (the declared bound + slack). */
  readonly recoveryBoundMs: number;
}
