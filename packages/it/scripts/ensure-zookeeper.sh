#!/usr/bin/env bash
# Makes sure Debian's ZooKeeper jars are on this machine, installing the `zookeeper`
# package with apt-get when they are missing. Prints nothing when all is in place.
set -euo pipefail

jar=/usr/share/java/zookeeper.jar
if [ -f "$jar" ] && command -v java >/dev/null 2>&1; then
  exit 0
fi

echo "orrery: ZooKeeper is not installed; installing Debian's 'zookeeper' package with apt-get ..." >&2
if ! command -v apt-get >/dev/null 2>&1; then
  echo "orrery: cannot install ZooKeeper: apt-get is not available. Install Debian's 'zookeeper' package (3.8) and Java 17, then run again." >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
    echo "orrery: cannot install ZooKeeper: not root and no sudo. Run 'apt-get install zookeeper' as root, then run again." >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y --no-install-recommends zookeeper >/tmp/orrery-apt.log 2>&1; then
  # The package lists may be missing or stale on a fresh machine: refresh once and retry.
  $sudo apt-get update >>/tmp/orrery-apt.log 2>&1 || true
  if ! $sudo apt-get install -y --no-install-recommends zookeeper >>/tmp/orrery-apt.log 2>&1; then
    echo "orrery: 'apt-get install zookeeper' failed; the last lines of /tmp/orrery-apt.log:" >&2
    tail -n 20 /tmp/orrery-apt.log >&2
    exit 1
  fi
fi
if [ ! -f "$jar" ]; then
  echo "orrery: the 'zookeeper' package installed but $jar is missing" >&2
  exit 1
fi
echo "orrery: ZooKeeper installed ($(dpkg-query -W -f='${Version}' zookeeper))." >&2
