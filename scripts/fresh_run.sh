#!/usr/bin/env bash
# Runs a command in a fresh clone of this repository on a fresh Debian 12 root file system, and
# says how long it took: how docs/testing.md measures the README's commands as a newcomer meets
# them, without the packages a previous run installed, on a machine that has them.
#
#   scripts/fresh_run.sh [--packages FILE] [--clone-to PATH] [--demo] [--] [COMMAND...]
#
# The fresh root is made once (debootstrap --variant=minbase bookworm, then the packages named
# in FILE, one a line: those a fresh machine of yours comes with, such as the compiler, cmake
# and git; without FILE, g++, cmake, make, git and pkg-config) and kept in
# /var/cache/rdma-eventd-fresh (FRESH_CACHE names another place). Each run gets a writable
# overlay over it that is thrown away afterwards, so every run starts from the same state. The
# clone of HEAD is made at PATH inside it (default /root/rdma-eventd), and COMMAND (default
# scripts/bootstrap.sh test) runs there as root, in a mount namespace whose root is the fresh
# one, with the host's /dev, /proc and /sys.
# The command's output goes to standard output; the last line is its exit status and wall time.
# --demo runs `scripts/bootstrap.sh demo --once` and says how long after the command its first
# record showed (the monitor's first line), then checks that it installed none of the packages
# that only `demo --kernel` and `test` need (bootstrap.sh's sets kernel and bench): one that it
# did fails the run.
# FRESH_KEEP=DIR copies the clone's test and build logs (ctest's LastTest.log of each build, the
# builds ahead's log, the packages' build log) to DIR before the run's root is thrown away.
# Needs root, debootstrap and a network that reaches the Debian archive.
set -euo pipefail

packages= clone_to=/root/rdma-eventd demo=0
while [ $# -gt 0 ]; do
  case $1 in
    --demo) demo=1; shift ;;
    --packages) packages=$2; shift 2 ;;
    --clone-to) clone_to=$2; shift 2 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fresh_run.sh: unknown option $1 (--help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ $demo = 1 ]; then
  set -- scripts/bootstrap.sh demo --once
fi
[ $# -gt 0 ] || set -- scripts/bootstrap.sh test
[ "$(id -u)" = 0 ] || { echo "fresh_run.sh: needs root (chroot, mounts)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "fresh_run.sh: install debootstrap" >&2; exit 1; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${FRESH_CACHE:-/var/cache/rdma-eventd-fresh}
base=$cache/root

# The fresh root, once. The host's apt sources (and its apt settings) are the root's, so that it
# installs from where the host does.
if [ ! -e "$base/.complete" ]; then
  rm -rf "$base"
  mkdir -p "$cache"
  echo "fresh_run: making the fresh root in $base (debootstrap, then the base packages)"
  debootstrap --variant=minbase bookworm "$base" >"$cache/debootstrap.log" 2>&1 || {
    tail -20 "$cache/debootstrap.log" >&2
    exit 1
  }
  cp -a /etc/apt/sources.list.d/. "$base/etc/apt/sources.list.d/" 2>/dev/null || true
  cp -a /etc/apt/sources.list "$base/etc/apt/" 2>/dev/null || true
  cp -a /etc/apt/apt.conf.d/. "$base/etc/apt/apt.conf.d/" 2>/dev/null || true
  cp /etc/resolv.conf "$base/etc/resolv.conf"
  if [ -n "$packages" ]; then
    mapfile -t wanted <"$packages"
  else
    wanted=(g++ cmake make git pkg-config)
  fi
  mount -t proc proc "$base/proc"
  (
    trap 'umount "$base/proc"' EXIT
    chroot "$base" apt-get update >"$cache/install.log" 2>&1
    # Only the names the archive has (a list from another machine may name others).
    mapfile -t available < <(chroot "$base" apt-cache policy "${wanted[@]}" 2>/dev/null |
      awk '/^[^ ]/ {p = $1; sub(":$", "", p)} /Candidate:/ && $2 != "(none)" {print p}')
    DEBIAN_FRONTEND=noninteractive chroot "$base" apt-get install -y --no-install-recommends \
      "${available[@]}" >>"$cache/install.log" 2>&1
    chroot "$base" apt-get clean
  ) || { tail -20 "$cache/install.log" >&2; exit 1; }
  # A fresh machine has not read the archive's lists yet.
  rm -rf "$base"/var/lib/apt/lists/*
  touch "$base/.complete"
fi

# This run's root: an overlay on the fresh one, with the host's devices, /proc and /sys.
run=$(mktemp -d /var/tmp/rdma-eventd-fresh-run.XXXXXX)
root=$run/root
mkdir -p "$run/upper" "$run/work" "$root"
cleanup() {
  if [ -n "${FRESH_KEEP:-}" ] && [ -d "$root$clone_to" ]; then
    mkdir -p "$FRESH_KEEP"
    (cd "$root$clone_to" && find . -maxdepth 4 \( -path '*/Testing/Temporary/*.log' \
      -o -name 'build-ahead.log' -o -name 'background.log' -o -name 'container-root.log' \) -print0 |
      xargs -0 -r cp --parents -t "$FRESH_KEEP") || true
  fi
  umount -R "$root" 2>/dev/null || umount -R -l "$root" 2>/dev/null || true
  rm -rf "$run"
}
trap cleanup EXIT
mount -t overlay overlay -o "lowerdir=$base,upperdir=$run/upper,workdir=$run/work" "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=0755 tmpfs "$root/run"
cp /etc/resolv.conf "$root/etc/resolv.conf"
git clone -q --no-local "$here" "$root$clone_to"
git -C "$root$clone_to" checkout -q "$(git -C "$here" rev-parse HEAD)"

echo "fresh_run: $* in $clone_to (a fresh clone of $(git -C "$here" rev-parse --short HEAD))," \
  "on a fresh Debian 12 root, $(nproc) CPUs"
start=$(date +%s)
rc=0
installed() { # the packages installed in the fresh root, one a line, sorted
  dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${db:Status-Abbrev} ${Package}\n' |
    awk '/^ii/ {print $2}' | sort
}
before=$(installed)
# demo_timing: passes the output on, and says when the monitor's first record showed (its lines
# begin with the record's time, 2026-11-22T03:15:50.104626Z).
demo_timing() {
  local line first=0
  while IFS= read -r line; do
    printf '%s\n' "$line"
    if [ $first = 0 ] && [[ $line =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z ]]; then
      first=1
      echo "fresh_run: the demo's first record $(($(date +%s) - start)) s after the command"
    fi
  done
}
[ $demo = 1 ] || demo_timing() { cat; }
# A mount namespace of its own whose root is the fresh root (pivot_root, not chroot: tools that
# enter other namespaces, nsenter and ip netns exec, would otherwise see the host's root).
unshare --mount --propagation private -- bash -c '
  set -e
  cd "$1"
  mkdir -p .host
  pivot_root . .host
  cd /
  umount -l /.host
  shift
  exec /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 CI="$CI" bash -c "cd \"\$1\" && shift && exec \"\$@\"" _ "$@"
' _ "$root" "$clone_to" "$@" | demo_timing || rc=$?
echo "fresh_run: exit status $rc after $(($(date +%s) - start)) s"
if [ $demo = 1 ]; then
  # What the demo installed of what only the kernel demo and the tests need.
  mapfile -t extra < <(comm -12 <(comm -13 <(echo "$before") <(installed)) \
    <({ "$here/scripts/bootstrap.sh" packages kernel; "$here/scripts/bootstrap.sh" packages bench; } | sort))
  echo "fresh_run: the demo installed $(comm -13 <(echo "$before") <(installed) | wc -l) packages;" \
    "of the test bench's (bootstrap.sh packages kernel, bench): ${extra[*]:-none}"
  [ ${#extra[@]} = 0 ] || rc=1
fi
exit "$rc"
