#!/usr/bin/env bash
# Builds, once, a Debian trixie chroot that runs moto_server (Debian forky's python3-moto, 5.1.18
# or later): the local S3 emulator that implements conditional PUT (If-Match / If-None-Match)
# exactly as AWS does. The chroot lives in a cache folder outside the clone and is reused; a marker
# file is written only when the build is complete, and an incomplete build is thrown away.
#
#   TURNLINE_MOTO_ROOT      chroot folder (default /var/cache/turnline/moto-root)
#   TURNLINE_DEBIAN_MIRROR  Debian mirror (default http://deb.debian.org/debian)
#
# Run moto from it with: chroot "$TURNLINE_MOTO_ROOT" moto_server -H 127.0.0.1 -p PORT (services.mjs
# runs it through moto-server-lean.py, moto-server-requests.py and moto-server-atomic.py: no
# per-request work that is not S3's, and its conditional writes atomic)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root="${TURNLINE_MOTO_ROOT:-/var/cache/turnline/moto-root}"
mirror="${TURNLINE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
marker="$root/.turnline-moto-ready"
min_version=5.1.18

step() { printf '[setup-moto] %s\n' "$*"; }
die() {
  printf '[setup-moto] error: %s\n' "$*" >&2
  exit 1
}

if [ -f "$marker" ] && [ -x "$root/usr/bin/moto_server" ]; then
  step "moto root ready at $root (python3-moto $(cat "$marker"))"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || die "building the moto root needs root (debootstrap, chroot); run: sudo $0"

mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock 9
# Another run may have finished the build while this one waited for the lock.
if [ -f "$marker" ] && [ -x "$root/usr/bin/moto_server" ]; then
  step "moto root ready at $root (python3-moto $(cat "$marker"))"
  exit 0
fi

unmount_all() {
  # Anything mounted below the root (an interrupted debootstrap can leave /proc, /sys mounted).
  local mounts
  mounts=$(awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r)
  for m in $mounts; do umount -l "$m" 2>/dev/null || true; done
}

if [ -e "$root" ]; then
  step "removing incomplete moto root at $root"
  unmount_all
  rm -rf --one-file-system "$root"
fi

"$here/ensure-packages.sh" debootstrap

started=$(date +%s)
trap unmount_all EXIT
step "debootstrap trixie into $root (takes a few minutes the first time)"
if ! debootstrap --variant=minbase --include=python3-moto,python3-flask,python3-flask-cors \
  trixie "$root" "$mirror" >"$root.debootstrap.log" 2>&1; then
  # python3-cffi-backend can be left unconfigured by debootstrap; the next steps repair that.
  step "debootstrap reported an error (log: $root.debootstrap.log); repairing in the chroot:"
  tail -n 2 "$root.debootstrap.log" | sed 's/^/    /'
fi
[ -x "$root/usr/bin/apt-get" ] || die "debootstrap left no usable system (see $root.debootstrap.log)"

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }

step "configuring python3-cffi-backend and the remaining packages"
in_root apt-get -o Dpkg::Use-Pty=0 install -y -qq python3-cffi-backend >/dev/null
in_root dpkg --configure -a

step "adding Debian forky and installing python3-moto from it"
echo "deb $mirror forky main" >"$root/etc/apt/sources.list.d/forky.list"
in_root apt-get -qq -o Acquire::Check-Valid-Until=false update
in_root apt-get -o Dpkg::Use-Pty=0 install -y -qq -t forky python3-moto >/dev/null

version=$(in_root dpkg-query -W -f='${Version}' python3-moto)
[ -x "$root/usr/bin/moto_server" ] || die "python3-moto installed no /usr/bin/moto_server"
dpkg --compare-versions "$version" ge "$min_version" ||
  die "python3-moto $version is older than $min_version (conditional PUT needs $min_version)"
in_root python3 -c 'import moto.server' || die "moto.server does not import in $root"

in_root apt-get clean
rm -f "$root.debootstrap.log"
printf '%s\n' "$version" >"$marker"
step "moto root ready at $root (python3-moto $version, built in $(($(date +%s) - started)) s)"
