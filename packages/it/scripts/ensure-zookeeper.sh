#!/usr/bin/env bash
# Makes sure Debian's ZooKeeper jars and a Java runtime are on this machine, installing the
# `zookeeper` package (which brings Java) with apt-get when they are missing. Prints nothing when
# all is in place.
set -euo pipefail
here="$(dirname "$0")"
bash "$here/ensure-debian-package.sh" zookeeper /usr/share/java/zookeeper.jar ZooKeeper
command -v java >/dev/null 2>&1 || bash "$here/ensure-debian-package.sh" default-jre-headless /usr/bin/java 'Java (for ZooKeeper)'
