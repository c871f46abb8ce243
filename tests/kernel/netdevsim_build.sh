#!/usr/bin/env bash
# Builds netdevsim.ko, the kernel's device simulator (devlink, its health reporters), for the
# guest's kernel: Debian's kernels do not build it, but it builds out of tree unchanged from
# linux-source against the kernel's headers. Only drivers/net/netdevsim is taken out of the
# source's tarball. The module is kept in DIR and built again only when the headers, the source
# or this script change. Prints the module's path (stdout); the rest goes to stderr.
#
#   tests/kernel/netdevsim_build.sh DIR KVER
#
# KVER is the guest's kernel (run.sh: the newest /lib/modules/*-amd64). linux-source-6.1 may be
# a Debian revision ahead of the kernel's image and headers (6.1.192-3 beside 6.1.192-2): the
# driver's source does not change between them, and the module's vermagic, checked here against
# the kernel's own modules, is the headers'.
# Missing packages: exit 1 with one line naming the package (scripts/bootstrap.sh installs them).
set -euo pipefail
dir=$1 kver=$2

missing() {
  echo "kernel test: $1 is missing: install the Debian package $2 (scripts/bootstrap.sh deps)" >&2
  exit 1
}
series=$(echo "$kver" | cut -d. -f1-2) # 6.1.0-56-amd64: 6.1
headers=/usr/src/linux-headers-$kver
tarball=/usr/src/linux-source-$series.tar.xz
[ -r "$headers/Makefile" ] || missing "the kernel's headers ($headers)" "linux-headers-$kver"
[ -r "$tarball" ] || missing "the kernel's source ($tarball)" "linux-source-$series"
command -v xz >/dev/null || missing xz xz-utils
command -v make >/dev/null || missing make make
command -v modinfo >/dev/null || missing modinfo kmod

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
ko=$dir/src/drivers/net/netdevsim/netdevsim.ko
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# What the module depends on: the headers' build (their kernel.release and Module.symvers), the
# source tarball and this script.
key=$( {
  echo "$kver"
  sha256sum "$headers/include/config/kernel.release" "$headers/Module.symvers" "$here/netdevsim_build.sh"
  stat -c '%s %Y %n' "$tarball"
} | sha256sum | cut -d' ' -f1)
if [ -r "$ko" ] && [ "$(cat "$dir/key" 2>/dev/null)" = "$key" ]; then
  echo "netdevsim: $ko is up to date" >&2
  echo "$ko"
  exit 0
fi

start=$EPOCHREALTIME
rm -rf "$dir/src" "$dir/key"
# kbuild cannot take a path with white space in M= (it reads two modules: "building multiple
# external modules is not supported"): a clone under such a path builds in a directory of its
# own under /var/tmp, and the module is copied to DIR.
src=$dir/src
if [[ $dir =~ [[:space:]] ]]; then
  src=$(mktemp -d /var/tmp/rdma-eventd-netdevsim.XXXXXX)
  trap 'rm -rf "$src"' EXIT
fi
mkdir -p "$src"
xz -dc "$tarball" | tar -x -C "$src" --strip-components=1 "linux-source-$series/drivers/net/netdevsim"
extracted=$EPOCHREALTIME
make -s -C "$headers" M="$src/drivers/net/netdevsim" CONFIG_NETDEVSIM=m -j2 modules >"$dir/build.log" 2>&1 || {
  cat "$dir/build.log" >&2
  echo "netdevsim: the module did not build against $headers" >&2
  exit 1
}
if [ "$src" != "$dir/src" ]; then
  mkdir -p "$(dirname "$ko")"
  cp "$src/drivers/net/netdevsim/netdevsim.ko" "$ko"
fi
# The module must load into the guest's kernel: same vermagic as the kernel's own modules
# (psample, which netdevsim needs, is one of them).
want=$(modinfo -k "$kver" -F vermagic psample)
got=$(modinfo -F vermagic "$ko")
if [ "$got" != "$want" ]; then
  echo "netdevsim: vermagic '$got' differs from the kernel's ($kver) '$want'" >&2
  exit 1
fi
echo "$key" >"$dir/key"
awk -v a="$start" -v b="$extracted" -v c="$EPOCHREALTIME" \
  'BEGIN { printf "netdevsim: built in %.1f s (extracted in %.1f s, compiled in %.1f s)\n", c - a, b - a, c - b }' >&2
echo "$ko"
