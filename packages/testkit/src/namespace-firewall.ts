import { execFile } from 'node:child_process';

/**
 * nftables rules inside one network namespace (made with {@link createMemberNetwork}): cut the
 * namespace off from some TCP ports of the host while both sides keep running, or drop a
 * random share of its packets. Packets are dropped silently (no RST), as on a real partition:
 * open connections hang until a timeout notices. Needs root and `nft` (Debian `nftables`).
 */
export interface NamespaceFirewall {
  /** Drops every TCP segment to or from these ports of `host` (replaces earlier rules). */
  isolate(host: string, ports: readonly number[]): Promise<void>;
  /** Drops `percent` % of the packets in and out, at random (replaces earlier rules). */
  lose(percent: number): Promise<void>;
  /** Removes every rule: the namespace's traffic flows again. */
  clear(): Promise<void>;
}

const table = 'lockkit';

/** `nft -f -` with `script` on stdin, inside `namespace`. */
function nft(namespace: string, script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'ip',
      ['netns', 'exec', namespace, 'nft', '-f', '-'],
      { timeout: 10_000 },
      (error, _stdout, stderr) => {
        if (error)
          reject(new Error(`nft in ${namespace}: ${String(stderr).trim() || error.message}`));
        else resolve();
      },
    );
    child.stdin?.end(script);
  });
}

/** Replaces the namespace's table with one whose output and input chains hold these rules. */
function replaceRules(namespace: string, outbound: string, inbound: string): Promise<void> {
  return nft(
    namespace,
    [
      `table inet ${table}`,
      `delete table inet ${table}`,
      `table inet ${table} {`,
      `  chain out { type filter hook output priority 0; ${outbound} }`,
      `  chain in { type filter hook input priority 0; ${inbound} }`,
      '}',
      '',
    ].join('\n'),
  );
}

/** The firewall of `namespace`. */
export function namespaceFirewall(namespace: string): NamespaceFirewall {
  return {
    isolate: (host, ports) => {
      const set = ports.join(', ');
      return replaceRules(
        namespace,
        `ip daddr ${host} tcp dport { ${set} } drop;`,
        `ip saddr ${host} tcp sport { ${set} } drop;`,
      );
    },
    lose: (percent) => {
      const share = Math.max(0, Math.min(100, Math.round(percent)));
      // numgen yields 0–99: `< 100` is out of its range, so all and none are plain rules.
      const rule =
        share >= 100 ? 'drop;' : share <= 0 ? '' : `numgen random mod 100 < ${share} drop;`;
      return replaceRules(namespace, rule, rule);
    },
    clear: () => nft(namespace, `table inet ${table}\ndelete table inet ${table}\n`),
  };
}
