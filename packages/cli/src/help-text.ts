import type { CommandName } from './invocation.js';

const overview = `lockkit — distributed locks from the command line

Usage:
  lockkit run [<url>] <name> [options] -- <command> [args…]
  lockkit run [<url>] <name> [options] -c "<shell command>"
  lockkit elect [<url>] <name> [options] -- <command> [args…]
  lockkit inspect [<url>] <name> [--shared | --exclusive | --semaphore <n>] [--json]
  lockkit force-release [<url>] <name> [--shared | --exclusive | --semaphore <n>] --yes
  lockkit demo [url]
  lockkit help [command]     lockkit --version

Commands:
  run       Run a command while holding a lock, like flock(1) but across machines.
  elect     Run a long-lived command only while elected leader; campaign again on loss.
  inspect   Show who holds a lock: holders with token, owner and since; waiters; free permits.
  force-release
            Break every current hold of a stuck lock (an operator's break; needs --yes).
  demo      Four processes sell 10 items under a lock; shows fencing tokens at work.

Lock URLs (install the backend package next to lockkit):
  file:///var/lock/myapp               a directory all processes see    @lockkit/file
  redis://host:6379                    one Redis node                   @lockkit/redis
  redis://h1:6379,h2:6379,h3:6379      Redlock over independent nodes   @lockkit/redis
  rediss://user:password@host:6380/0   TLS, credentials, database       @lockkit/redis
  redis+cluster://h1:6379,h2:6379      a Redis Cluster (seed nodes)     @lockkit/redis
  redis+sentinel://s1,s2,s3/mymaster   primary found via Sentinels      @lockkit/redis
  postgres://user:password@host/db     PostgreSQL advisory locks        @lockkit/postgres
  mysql://user:password@host/db        MySQL or MariaDB (mariadb://)    @lockkit/mysql
  zookeeper://zk1:2181,zk2:2181/app    ZooKeeper (zk:// too)            @lockkit/zookeeper
  etcd://e1:2379,e2:2379,e3:2379       etcd (etcds:// for TLS)          @lockkit/etcd
  memory:                              this process only, for trying things out
  Provider options go in the query: file:///var/lock/myapp?leaseMs=10000&namespace=billing

The URL may be left out of run, elect, inspect and force-release: then --url-file <file> (a file holding the URL)
gives it, or else the LOCKKIT_URL environment variable. Both keep passwords out of ps.

Run 'lockkit help run' for the exit codes and what the command sees.
`;

const run = `lockkit run [<url>] <name> [options] -- <command> [args…]
lockkit run [<url>] <name> [options] -c "<shell command>"

Waits for the lock <name>, runs <command> while holding it, and releases it when the
command exits. Nothing about the command changes, except that it gets:
  LOCKKIT_FENCING_TOKEN   this hold's fencing token (a decimal integer that only grows)
  LOCKKIT_LOCK_NAME       the lock name
  LOCKKIT_LOCK_KIND       mutex, read, write or semaphore
  LOCKKIT_BACKEND         file, redis, postgres, mysql, zookeeper, etcd or memory
Pass the token to whatever you write to, so it can refuse a writer whose lock was lost.

The lock URL: the <url> argument, else the content of --url-file <file>, else the
LOCKKIT_URL environment variable.

Options:
  -t, --timeout <duration>    Give up after this long (500, 500ms, 30s, 5m). 0 = one attempt.
                              Default: wait forever.
  -w, --wait <seconds>        The same in seconds, as flock(1) takes it (10, 0.5).
  -n, --nonblock              Do not wait: one attempt (as --timeout 0).
  -E, --conflict-exit-code <n>
                              Exit with n (0-255) when the lock could not be taken in time.
                              Default: 75.
  -c, --command <string>      Run the string with /bin/sh -c instead of a command after --.
      --url-file <file>       Read the lock URL from this file (one line).
  -s, --shared                Take the read side of the read-write lock <name>.
  -x, --exclusive             Take the write side of the read-write lock <name>.
      --semaphore <n>         Take one of <n> permits of the semaphore <name>.
                              Without these: the mutex <name> (a different lock from the
                              read-write lock and the semaphore of the same name).
  -k, --kill-after <duration> If the lock is lost, the command gets SIGTERM, and SIGKILL
                              this long after. Default: 10s.
      --verbose               Say on stderr when lockkit waits, acquires and releases.
  -h, --help                  This help.

Exit status:
  the command's own status    when it ran and the lock was held throughout
  128+n                       the command was killed by signal n (130: SIGINT, 143: SIGTERM)
  64                          usage error: bad option, malformed URL or option value, no URL
  66                          --url-file cannot be read or holds no URL
  69                          backend unavailable: server unreachable, or its package is not
                              installed (the message says what to npm install)
  70                          internal error in lockkit
  75                          the lock was not taken: timed out, or held with --nonblock (the
                              command did not run); --conflict-exit-code changes it
  76                          the lock was lost while the command ran (it was signalled), or
                              release found it was no longer held: treat the work as unsafe
  126, 127                    the command could not be executed / was not found

Signals: Ctrl-C, SIGTERM and SIGHUP are passed on to the command; lockkit keeps the lock
until the command has exited, then releases it. While still waiting, they stop the wait and
lockkit exits with 128+n without running the command.

Examples:
  lockkit run file:///var/lock/myapp nightly-report -- ./report.sh
  lockkit run "$LOCK_URL" db-migrate --timeout 5m -- npm run migrate
  lockkit run redis://cache:6379 exports --semaphore 4 -- ./export.sh
  LOCKKIT_URL=postgres://app@db/app lockkit run nightly -n -E 0 -c 'pg_dump app > app.sql'
`;

const elect = `lockkit elect [<url>] <name> [options] -- <command> [args…]
lockkit elect [<url>] <name> [options] -c "<shell command>"

Campaigns in the leader election <name> (core's election, on the mutex "election:<name>")
and runs <command> only while elected: for a daemon or scheduler that must run on exactly
one machine. When leadership is lost (lease or session gone), the command gets SIGTERM, then
SIGKILL after --kill-after, and lockkit campaigns again; when elected again, it starts the
command again. When the command exits by itself, lockkit resigns and exits with its status
(let your supervisor restart it). The command's environment gains:
  LOCKKIT_EPOCH           the term's epoch (its fencing token: a decimal integer that only
                          grows); also as LOCKKIT_FENCING_TOKEN
  LOCKKIT_ELECTION        the election name
  LOCKKIT_OWNER           the owner label
  LOCKKIT_BACKEND         file, redis, postgres, mysql, zookeeper or memory
Pass the epoch to whatever the command writes to, so it can refuse a stale leader.

The lock URL: the <url> argument, else the content of --url-file <file>, else the
LOCKKIT_URL environment variable.

Options:
  -c, --command <string>      Run the string with /bin/sh -c instead of a command after --.
  -k, --kill-after <duration> When leadership is lost, the command gets SIGTERM, and SIGKILL
                              this long after (500, 500ms, 30s, 5m). Default: 10s.
      --once                  After a lost leadership, exit 76 instead of campaigning again.
      --owner <label>         The owner label (default: <hostname>:<pid>).
      --url-file <file>       Read the lock URL from this file (one line).
      --verbose               Say on stderr when lockkit campaigns, is elected and resigns.
  -h, --help                  This help.

Exit status:
  the command's own status    it exited by itself while lockkit led (lockkit resigned)
  128+n                       the command was killed by signal n, or lockkit got signal n
                              while campaigning (the command was not running)
  64                          usage error: bad option, malformed URL or option value, no URL
  66                          --url-file cannot be read or holds no URL
  69                          backend unavailable: the server cannot be reached at start,
                              or the backend package is not installed (the message says what
                              to npm install). Later outages are waited out: lockkit keeps
                              campaigning.
  70                          internal error in lockkit
  76                          with --once: leadership was lost while the command ran (it was
                              stopped)
  126, 127                    the command could not be executed / was not found

Signals: Ctrl-C, SIGTERM and SIGHUP are passed on to a running command; lockkit stays leader
until it has exited, then resigns and exits with its status. While campaigning, they end the
campaign: lockkit exits with 128+n.

Examples:
  lockkit elect redis://cache:6379 scheduler -- node scheduler.js
  LOCKKIT_URL=postgres://app@db/app lockkit elect mailer --owner "$HOSTNAME" -- ./mailer
`;

const inspect = `lockkit inspect [<url>] <name> [--shared | --exclusive | --semaphore <n>] [--json]
                [--url-file <file>]

Shows who holds the lock <name> (the mutex, or with --shared/--exclusive the read-write lock,
or with --semaphore <n> the semaphore of n permits), through the backend's inspect(): each
hold with its kind, fencing token, owner label (the holder's ?owner=, default <host>:<pid>),
since when it is held and when its lease ends; how many wait, where the server registers
waiters (not on Redis, whose waiters wait for a notification); free permits of a semaphore.
Every backend answers. It only reads: it never takes or changes the lock. The URL comes from
the argument, --url-file or LOCKKIT_URL, as for run.

Exit status: 0 (the report was printed), 64 usage error, 66 --url-file unusable, 69 the
server cannot be reached or refuses, 70 internal error.
`;

const forceRelease = `lockkit force-release [<url>] <name> [--shared | --exclusive | --semaphore <n>] --yes
                      [--json] [--url-file <file>]

An operator's break for a stuck lock (a hung holder, a lease set too long): ends every
current hold of the lock, whoever holds it. Each broken holder's signal aborts within the
backend's declared bound (lockkit run then stops its command, exit 76), its late release is
refused, and the next holder gets a higher fencing token. Waiters stay queued; the first is
granted. Without --yes it refuses and changes nothing. It prints the holders it breaks
(as inspect does), then how many it broke.

Exit status: 0 (done, also when nothing was held), 64 usage error or no --yes, 66
--url-file unusable, 69 the server cannot be reached or refuses, 70 internal error.

Example:
  lockkit inspect postgres://ops@db/app nightly-report
  lockkit force-release postgres://ops@db/app nightly-report --yes
`;

const demo = `lockkit demo [url]

Four worker processes buy from a stock of 10 items kept in a JSON file guarded by the lock
"inventory" on <url> (default: a file lock directory in a temporary folder). Exactly 10 are
sold; each sale carries its fencing token, and the stock file refuses a write whose token
is older than one it has seen. On lease backends (file, redis) one worker stalls past its
lease on purpose, so you can watch its late write being refused. Exit status 0 when no item
was oversold, 1 otherwise.

  lockkit demo
  lockkit demo memory:
  lockkit demo postgres://postgres@localhost/postgres
`;

/** The help text for `topic`, or the overview. */
export function helpText(topic: CommandName | undefined): string {
  if (topic === 'run') return run;
  if (topic === 'elect') return elect;
  if (topic === 'inspect') return inspect;
  if (topic === 'force-release') return forceRelease;
  if (topic === 'demo') return demo;
  return overview;
}
