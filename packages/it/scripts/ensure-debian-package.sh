#!/usr/bin/env bash
# ensure-debian-package.sh PACKAGE FILE [WHAT]: makes sure FILE exists, installing Debian's PACKAGE
# with apt-get when it does not (refreshing the package lists once if the first try fails).
# Prints nothing when all is in place. WHAT names what is missing in messages (default: PACKAGE).
set -euo pipefail

package="$1"
file="$2"
what="${3:-$1}"
if [ -e "$file" ]; then
  exit 0
fi

echo "orrery: $what is not installed; installing Debian's '$package' package with apt-get ..." >&2
if ! command -v apt-get >/dev/null 2>&1; then
  echo "orrery: cannot install $what: apt-get is not available. Install Debian's '$package' package, then run again." >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
    echo "orrery: cannot install $what: not root and no sudo. Run 'apt-get install $package' as root, then run again." >&2
    exit 1
  fi
fi
log="/tmp/orrery-apt-$package.log"
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y --no-install-recommends "$package" >"$log" 2>&1; then
  # The package lists may be missing or stale on a fresh machine: refresh once and retry.
  $sudo apt-get update >>"$log" 2>&1 || true
  if ! $sudo apt-get install -y --no-install-recommends "$package" >>"$log" 2>&1; then
    echo "orrery: 'apt-get install $package' failed; the last lines of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
fi
if [ ! -e "$file" ]; then
  echo "orrery: the '$package' package installed but $file is missing" >&2
  exit 1
fi
echo "orrery: $what installed ($(dpkg-query -W -f='${Version}' "$package"))." >&2
