import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Why a cluster with `network: 'namespaces'` cannot be started here (not root, no `ip`, …). */
export class NetworkNamespacesUnavailableError extends Error {
  override readonly name = 'NetworkNamespacesUnavailableError';
}

/**
 * One network namespace per member, joined by a veth pair to a bridge in the root namespace:
 * members reach each other across the bridge, the test process reaches them through the
 * bridge's address. Taking a member's outer veth end down cuts it off from everyone.
 */
export interface MemberNetwork {
  /** The namespace each member runs in (`ip netns exec <namespace> …`). */
  readonly namespaces: readonly string[];
  /** Each member's address inside its namespace. */
  readonly addresses: readonly string[];
  /** The bridge's address in the root namespace: how a member reaches the host. */
  readonly bridgeAddress: string;
  partition(index: number): Promise<void>;
  heal(index: number): Promise<void>;
  /** Deletes every namespace, veth pair and the bridge this network made (never throws). */
  remove(): Promise<void>;
}

/** How many member networks one process can have up at once (one name and subnet each). */
const maxNetworks = 10;
/** The slots (names, subnet) of this process's networks that are up or being made. */
const slotsInUse = new Set<number>();

async function ip(...args: string[]): Promise<void> {
  await run('ip', args, { timeout: 10_000 });
}

/**
 * Names and a private 10.x.y.0/24 subnet unique to this process and this network: a slot no
 * network of this process holds now (a reused slot would share, and on removal delete, the
 * names of one still up: a long chaos run cut its ZooKeeper ensemble off this way).
 */
function plan(size: number) {
  const sequence = Array.from({ length: maxNetworks }, (_, slot) => slot).find(
    (slot) => !slotsInUse.has(slot),
  );
  if (sequence === undefined) {
    throw new Error(`more than ${maxNetworks} member networks at once in one process`);
  }
  slotsInUse.add(sequence);
  const tag = `lke${process.pid % 100_000}${sequence}`;
  const subnet = `10.${214 + sequence}.${process.pid % 250}`;
  return {
    sequence,
    bridge: `${tag}br`,
    bridgeAddress: `${subnet}.1`,
    namespaces: Array.from({ length: size }, (_, index) => `${tag}n${index}`),
    outer: Array.from({ length: size }, (_, index) => `${tag}o${index}`),
    inner: Array.from({ length: size }, (_, index) => `${tag}i${index}`),
    addresses: Array.from({ length: size }, (_, index) => `${subnet}.${index + 2}`),
  };
}

function removals(names: ReturnType<typeof plan>): string[][] {
  return [
    ...names.outer.map((outer) => ['link', 'del', outer]),
    ['link', 'del', names.bridge],
    ...names.namespaces.map((namespace) => ['netns', 'del', namespace]),
  ];
}

async function removeQuietly(names: ReturnType<typeof plan>): Promise<void> {
  for (const args of removals(names)) await ip(...args).catch(() => undefined);
  slotsInUse.delete(names.sequence);
}

/** For a process that exits without stopping its cluster (the servers die with it too). */
function removeSynchronously(names: ReturnType<typeof plan>): void {
  for (const args of removals(names)) {
    try {
      execFileSync('ip', args, { stdio: 'ignore', timeout: 10_000 });
    } catch {
      // Not made, or already gone.
    }
  }
}

async function build(names: ReturnType<typeof plan>): Promise<void> {
  await ip('link', 'add', names.bridge, 'type', 'bridge');
  await ip('addr', 'add', `${names.bridgeAddress}/24`, 'dev', names.bridge);
  await ip('link', 'set', names.bridge, 'up');
  for (const [index, namespace] of names.namespaces.entries()) {
    const [outer, inner] = [names.outer[index]!, names.inner[index]!];
    const inside = (...args: string[]) => ip('netns', 'exec', namespace, 'ip', ...args);
    await ip('netns', 'add', namespace);
    await ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
    await ip('link', 'set', inner, 'netns', namespace);
    await ip('link', 'set', outer, 'master', names.bridge);
    await ip('link', 'set', outer, 'up');
    await inside('addr', 'add', `${names.addresses[index]}/24`, 'dev', inner);
    await inside('link', 'set', inner, 'up');
    await inside('link', 'set', 'lo', 'up');
  }
}

/**
 * Makes the namespaces, veth pairs and bridge for `size` members. Rejects with
 * {@link NetworkNamespacesUnavailableError} (after removing what it made) where it cannot.
 */
export async function createMemberNetwork(size: number): Promise<MemberNetwork> {
  if (process.platform !== 'linux') {
    throw new NetworkNamespacesUnavailableError('network namespaces need Linux');
  }
  if (process.getuid?.() !== 0) {
    throw new NetworkNamespacesUnavailableError('network namespaces need root (uid 0)');
  }
  const names = plan(size);
  const onExit = (): void => removeSynchronously(names);
  process.once('exit', onExit);
  try {
    await build(names);
  } catch (error) {
    process.off('exit', onExit);
    await removeQuietly(names);
    const detail = String((error as { stderr?: unknown }).stderr ?? error).trim();
    throw new NetworkNamespacesUnavailableError(
      `cannot make network namespaces with iproute2 (\`ip\`): ${detail.split('\n')[0]}`,
    );
  }
  return {
    namespaces: names.namespaces,
    addresses: names.addresses,
    bridgeAddress: names.bridgeAddress,
    partition: (index) => ip('link', 'set', names.outer[index]!, 'down'),
    heal: (index) => ip('link', 'set', names.outer[index]!, 'up'),
    remove: async () => {
      process.off('exit', onExit);
      await removeQuietly(names);
    },
  };
}
