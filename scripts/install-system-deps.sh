#!/usr/bin/env bash
# Installs the Debian packages whose servers the tests start (see docs: real servers in tests):
#   redis-server, postgresql, mariadb-server, zookeeper, etcd-server (+ etcd-client for etcdctl),
# and the fault tools of the partition/clock tests and `pnpm chaos --faults partition`:
#   iproute2 (ip netns), nftables (nft: partitions, packet loss), faketime (libfaketime).
# Idempotent and quick: when every server binary is present it does nothing (no apt-get call).
# Installs only what is missing, as root or through passwordless sudo; otherwise prints the
# packages to install and exits with status 1.
set -euo pipefail

have_executable() {
  local name
  for name in "$@"; do
    if command -v "$name" >/dev/null 2>&1; then return 0; fi
    local directory
    for directory in /usr/sbin /usr/bin /usr/local/sbin /usr/local/bin; do
      if [ -x "$directory/$name" ]; then return 0; fi
    done
  done
  return 1
}

have_postgres() {
  local directory
  for directory in /usr/lib/postgresql/*/bin; do
    if [ -x "$directory/initdb" ] && [ -x "$directory/postgres" ]; then return 0; fi
  done
  have_executable initdb && have_executable postgres
}

have_zookeeper() {
  [ -r /usr/share/java/zookeeper.jar ] && have_executable java
}

missing=()
have_executable redis-server || missing+=(redis-server)
have_postgres || missing+=(postgresql)
{ have_executable mariadb-install-db mysql_install_db && have_executable mariadbd mysqld; } ||
  missing+=(mariadb-server)
have_zookeeper || missing+=(zookeeper)
have_executable etcd || missing+=(etcd-server)
have_executable etcdctl || missing+=(etcd-client)
have_executable ip || missing+=(iproute2)
have_executable nft || missing+=(nftables)
have_executable faketime || missing+=(faketime)

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-system-deps: redis-server, postgresql, mariadb-server, zookeeper, etcd, iproute2, nftables and faketime are installed."
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  run_as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  run_as_root=(sudo -n)
else
  echo "install-system-deps: missing Debian packages: ${missing[*]}" >&2
  echo "Install them as root:  apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-system-deps: missing packages ${missing[*]}, and apt-get is not available." >&2
  echo "Install the equivalent packages with this system's package manager." >&2
  exit 1
fi

echo "install-system-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
${run_as_root[@]+"${run_as_root[@]}"} apt-get update
${run_as_root[@]+"${run_as_root[@]}"} apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-system-deps: done."
