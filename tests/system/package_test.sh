#!/usr/bin/env bash
# The Debian packages, installed for real. The packages of this tree are built first when they
# are not up to date (scripts/bootstrap.sh package: dpkg-buildpackage, then lintian). Then a
# Debian 12 container boots with systemd as PID 1 and no network, twice:
#   1. On the clean root, `apt-get install` of the four packages (their dependencies are
#      already in the root; apt knows no archive to download from): the socket is enabled and
#      listens, the service is neither enabled nor running, the group, the catalog and the
#      manual pages are there. The simulator from rdma-eventd-sim runs as a unit with the
#      demo topology and the drop-in of docs/operations.md points the service at it; a
#      subscriber (rdma-eventctl) starts the service; an injected event reaches it and
#      `journalctl -u rdma-eventd` with its RDMA_* fields. `apt-get remove` stops both units and
#      removes them, leaving the configuration; `apt-get purge` leaves nothing of the packages:
#      the file system is as before the install but for what the list below allows, each for
#      its reason.
#   2. The "previous build" (the same packages repacked with a lower version, see below) is
#      installed and its service started; the configuration is changed; the upgrade to this
#      build keeps the changed configuration, restarts the running service (a new MainPID,
#      which then applies that configuration) and leaves the socket listening throughout.
# The previous build is these very packages with the version 0.1.0~prev (dpkg-deb: extract,
# edit control, rebuild), so it is cheap. It proves the upgrade path of the maintainer scripts
# (prerm upgrade, postinst configure with an old version: conffile handling, try-restart of the
# service, the socket left alone); it does not prove that a real change between two versions
# (another configuration format, other unit files) upgrades well, since nothing differs but
# the version. Needs root. Run by ctest (environment in CMakeLists.txt); every wait is bounded.
set -euo pipefail
: "${SOURCE_DIR:?run it through ctest}"

# shellcheck source-path=SCRIPTDIR source=container_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/container_lib.sh"

deb_dir=$SOURCE_DIR/build-deb
packages=(rdma-eventd librdma-eventd2 librdma-eventd-dev rdma-eventd-sim)
sock=/run/rdma-eventd/events.sock
config=/etc/rdma-eventd/rdma-eventd.json
topology=/usr/share/rdma-sim/topologies/two-adapters.json
client_pid=

diagnostics() { service_diagnostics; }

# --- the packages -------------------------------------------------------------------------------
for tool in dpkg-buildpackage dh lintian scdoc man; do
  command -v "$tool" >/dev/null || fail "$tool is missing: scripts/bootstrap.sh deps installs it"
done
container_setup
scratch=$container_scratch
step "the packages of this tree (scripts/bootstrap.sh package)"
(cd "$SOURCE_DIR" && scripts/bootstrap.sh package) >"$scratch/package.log" 2>&1 || {
  tail -60 "$scratch/package.log" >&2
  fail "scripts/bootstrap.sh package failed (above: the end of its output)"
}
grep -E '^bootstrap: (the packages in .* are up to date|lintian)' "$scratch/package.log"
arch=$(dpkg --print-architecture)
version=$(dpkg-deb -f "$deb_dir"/rdma-eventd_*_"$arch".deb Version)
debs=()
for p in "${packages[@]}"; do
  debs+=("$p"_"$version"_"$arch".deb)
  [ -f "$deb_dir/${debs[-1]}" ] || fail "no $deb_dir/${debs[-1]}"
done

step "the previous build: the same packages as version $version~prev"
mkdir "$scratch/prev"
for deb in "${debs[@]}"; do
  tree=$scratch/prev/tree
  dpkg-deb -R "$deb_dir/$deb" "$tree"
  # The version, and the dependencies between the packages that name it (rdma-eventd on
  # librdma-eventd2 (>= VERSION), librdma-eventd-dev on librdma-eventd2 (= VERSION)).
  sed -i -E -e "s/^Version: $version\$/Version: $version~prev/" \
    -e "s/\((>?=) $version\)/(\1 $version~prev)/g" "$tree/DEBIAN/control"
  dpkg-deb --root-owner-group -b "$tree" "$scratch/prev/${deb/_"$version"_/_"$version"~prev_}" \
    >/dev/null
  rm -rf "$tree"
done

# --- in the container ---------------------------------------------------------------------------
in_debs() { printf "/opt/$1/%s " "${@:2}"; }
# apt knows no archive (no sources) and the container has no network: what the packages need
# must be in the root already, and nothing else can come in. (--no-download is no use: apt 2.6
# refuses to install local .debs with it, "Pathname to install is not absolute".)
apt_get() {
  inside env DEBIAN_FRONTEND=noninteractive apt-get -y -o Dir::Etc::SourceList=/dev/null \
    -o Dir::Etc::SourceParts=/dev/null "$@"
}
client_has() { grep -q "$1" "$scratch/client.out"; }
sim() { inside rdma-sim --dir /run/rdma-sim "$@" >/dev/null; }

# subscribe: rdma-eventctl monitor --json in the container, its records in client.out.
subscribe() {
  : >"$scratch/client.out"
  timeout 300 nsenter -t "$C" -m -u -i -n -p -C rdma-eventctl monitor --json \
    >"$scratch/client.out" 2>&1 &
  client_pid=$!
}

# start_simulator: rdma-sim from its package as a unit, and the drop-in of docs/operations.md.
start_simulator() {
  start_simulator_unit rdma-sim /usr/lib/rdma-sim "$topology"
}

# stop_simulator: what start_simulator made goes (it is the operator's, not the packages').
stop_simulator() {
  inside systemctl stop rdma-sim.service
  inside systemctl revert rdma-eventd.service >/dev/null
}

# A subscriber starts the service, which then watches the simulator's two adapters.
service_started_by_subscriber() {
  subscribe
  wait_for 60 "active service (READY=1)" prop_is rdma-eventd.service ActiveState active
  wait_for 20 "StatusText with the subscriber" \
    prop_is rdma-eventd.service StatusText "2 devices, 3 ports up, 0 down, 1 subscriber"
}

# The file system as paths, for the purge check: everything on the root file system and in
# /run, but what systemd, journald and the kernel keep there for themselves.
snapshot() {
  inside bash -c 'find / -xdev -path /var/log -prune -o -print; find /run \
    \( -path /run/systemd -o -path /run/log -o -path /run/udev -o -path /run/user \) -prune \
    -o -print' | sort >"$1"
}

# apt-get install of this tree's packages (its output in $scratch/LOG), after which each is
# installed at $version.
install_these_packages() { # LOG WHAT
  # shellcheck disable=SC2046  # the paths are words
  apt_get install $(in_debs debs "${debs[@]}") >"$scratch/$1" 2>&1 || {
    cat "$scratch/$1" >&2
    fail "$2 failed"
  }
  local p
  for p in "${packages[@]}"; do
    [ "$(inside dpkg-query -W -f='${Status} ${Version}' "$p")" = "install ok installed $version" ] ||
      fail "$p is not installed at $version: $(inside dpkg-query -W -f='${Status} ${Version}' "$p" || true)"
  done
}

step "booting a clean Debian 12 root (no network)"
container_boot --private-network --bind-ro="$deb_dir:/opt/debs" --bind-ro="$scratch/prev:/opt/prev"
snapshot "$scratch/before"

step "apt-get install of ${packages[*]}"
install_these_packages install.log "apt-get install"
inside dpkg-query -W -f='${Conffiles}\n' rdma-eventd | grep -q "^ $config " ||
  fail "$config is not a conffile of rdma-eventd"
inside getent group rdma-events >/dev/null || fail "the postinst made no group rdma-events"
inside journalctl --list-catalog | grep -c ' rdma-eventd: ' >/dev/null ||
  fail "the catalog was not indexed (systemd's trigger)"
inside test -f /lib/udev/rules.d/60-rdma-eventd.rules || fail "no udev rule"

step "the socket is enabled and listens; the service neither runs nor is enabled"
[ "$(inside systemctl is-enabled rdma-eventd.socket)" = enabled ] ||
  fail "the socket is not enabled"
prop_is rdma-eventd.socket SubState listening || fail "rdma-eventd.socket is not listening"
[ "$(inside stat -c '%a %U %G' "$sock")" = "660 root rdma-events" ] ||
  fail "$sock is $(inside stat -c '%a %U %G' "$sock" || true), not 660 root rdma-events"
[ "$(inside systemctl is-enabled rdma-eventd.service || true)" = disabled ] ||
  fail "the service is $(inside systemctl is-enabled rdma-eventd.service || true), not disabled"
prop_is rdma-eventd.service ActiveState inactive || fail "the install started the service"
# The Slurm follower (docs/scheduler.md): installed, off until an operator enables it.
inside test -f /lib/systemd/system/rdma-eventd-slurm.service || fail "no rdma-eventd-slurm.service"
[ "$(inside systemctl is-enabled rdma-eventd-slurm.service || true)" = disabled ] ||
  fail "rdma-eventd-slurm.service is $(inside systemctl is-enabled rdma-eventd-slurm.service || true), not disabled"

step "the manual pages"
for page in 8:rdma-eventd 8:rdma-eventd-slurm 1:rdma-eventctl 5:rdma-eventd.json 3:librdma-eventd 1:rdma-sim; do
  name=${page#*:}
  inside env MANWIDTH=80 MANPAGER=cat man "${page%%:*}" "$name" >"$scratch/page" 2>&1 ||
    fail "man ${page%%:*} $name: $(cat "$scratch/page")"
  grep -qE "^ +$name - " "$scratch/page" ||
    fail "man ${page%%:*} $name shows: $(head -5 "$scratch/page")"
done

step "the simulator as a unit; a subscriber starts the service"
start_simulator
service_started_by_subscriber
[ "$(inside systemctl show -P TriggeredBy rdma-eventd.service)" = rdma-eventd.socket ] ||
  fail "the service is not triggered by its socket"

event_reaches_subscriber_and_journal

step "apt-get remove stops and removes the units, and keeps the configuration"
stop_simulator
main_pid=$(prop rdma-eventd.service MainPID)
apt_get remove "${packages[@]}" >"$scratch/remove.log" 2>&1 || {
  cat "$scratch/remove.log" >&2
  fail "apt-get remove failed"
}
inside test ! -d "/proc/$main_pid" || fail "the daemon $main_pid still runs"
for unit in rdma-eventd.service rdma-eventd.socket; do
  prop_is "$unit" LoadState not-found || fail "$unit is still $(prop "$unit" LoadState)"
  prop_is "$unit" ActiveState inactive || fail "$unit is still $(prop "$unit" ActiveState)"
done
inside test ! -e "$sock" || fail "$sock is still there"
wait_for 20 "end of the subscriber's stream" bash -c "! kill -0 $client_pid"
client_pid=
inside test -f "$config" || fail "apt-get remove took the configuration"
[ "$(inside dpkg-query -W -f='${Status}' rdma-eventd)" = "deinstall ok config-files" ] ||
  fail "rdma-eventd is $(inside dpkg-query -W -f='${Status}' rdma-eventd)"

step "apt-get purge leaves nothing of the packages"
# What dpkg still knows of after the removal: the packages with configuration files (rdma-eventd);
# the others are gone already.
leftover_packages=$({ inside dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' \
  "${packages[@]}" 2>/dev/null || true; } | awk '$2 == "rc" { print $1 }')
[ "$leftover_packages" = rdma-eventd ] ||
  fail "after the removal dpkg keeps the configuration of $leftover_packages, not rdma-eventd's"
apt_get purge rdma-eventd >"$scratch/purge.log" 2>&1 || {
  cat "$scratch/purge.log" >&2
  fail "apt-get purge failed"
}
for p in "${packages[@]}"; do
  inside dpkg-query -W -f='${Status}' "$p" >/dev/null 2>&1 && fail "dpkg still knows $p"
done
snapshot "$scratch/after"
# What may stay, and why:
#  - what apt, dpkg and man-db keep about every package: their caches, the state of dpkg's
#    triggers and the previous copies of its databases, apt's record of which packages were
#    installed automatically (which must not name ours any more) and its directory for local
#    .debs (empty);
#  - the simulator's own directory, /run/rdma-sim (made by `rdma-sim start`, the operator's
#    command, on a tmpfs).
# The group rdma-events stays too (in /etc/group, a file that was there before): Debian does
# not remove a package's system groups, since files may still belong to them. The journal
# keeps its entries (/var/log and /run/log are journald's; the history outlives the service).
allowed='^/var/cache/(apt|man|ldconfig)(/|$)|^/var/lib/dpkg/(triggers/|[a-z]+-old$)'
allowed+='|^/var/lib/apt/(extended_states|lists/auxfiles)$|^/run/rdma-sim(/|$)'
leftovers=$(comm -13 "$scratch/before" "$scratch/after" | grep -Ev "$allowed" || true)
gone=$(comm -23 "$scratch/before" "$scratch/after" | grep -Ev "$allowed" || true)
[ -z "$leftovers" ] || fail "left after the purge: $leftovers"
[ -z "$gone" ] || fail "gone after the purge, though it was there before the install: $gone"
inside getent group rdma-events >/dev/null || fail "the group rdma-events is gone"
if inside grep -E "^Package: (rdma-eventd|librdma-eventd)" /var/lib/apt/extended_states \
  2>/dev/null; then
  fail "apt still records the packages (above)"
fi

step "booting the clean root again, for the upgrade"
container_halt
container_boot --private-network --bind-ro="$deb_dir:/opt/debs" --bind-ro="$scratch/prev:/opt/prev"

step "the previous build, running, with a changed configuration"
# shellcheck disable=SC2046  # the paths are words
apt_get install $(cd "$scratch/prev" && in_debs prev ./*.deb) >"$scratch/install-prev.log" 2>&1 || {
  cat "$scratch/install-prev.log" >&2
  fail "apt-get install of the previous build failed"
}
[ "$(inside dpkg-query -W -f='${Version}' rdma-eventd)" = "$version~prev" ] ||
  fail "the previous build is not installed"
changed='{"severity": {"port_err": "critical"}}'
inside tee "$config" <<<"$changed" >/dev/null
start_simulator
service_started_by_subscriber
old_pid=$(prop rdma-eventd.service MainPID)
socket_since=$(prop rdma-eventd.socket ActiveEnterTimestampMonotonic)

step "the upgrade to $version"
install_these_packages upgrade.log "apt-get install of $version over the previous build"
[ "$(inside cat "$config")" = "$changed" ] ||
  fail "the upgrade changed $config: $(inside cat "$config")"
inside bash -c "! ls /etc/rdma-eventd/*.dpkg-*" >/dev/null 2>&1 ||
  fail "the upgrade left $(inside bash -c 'ls /etc/rdma-eventd/*.dpkg-*')"
restarted() {
  local pid
  pid=$(prop rdma-eventd.service MainPID)
  [ "$pid" != 0 ] && [ "$pid" != "$old_pid" ] && prop_is rdma-eventd.service ActiveState active
}
wait_for 60 "restarted service (a new MainPID)" restarted
inside test ! -d "/proc/$old_pid" || fail "the previous daemon $old_pid still runs"
prop_is rdma-eventd.socket ActiveEnterTimestampMonotonic "$socket_since" ||
  fail "the upgrade restarted the socket"
[ "$(inside systemctl is-enabled rdma-eventd.socket)" = enabled ] ||
  fail "the socket is not enabled"
[ "$(inside systemctl is-enabled rdma-eventd.service || true)" = disabled ] ||
  fail "the upgrade enabled the service"

step "the restarted daemon applies the kept configuration"
# The restart ended the subscriber's connection: a new one.
wait_for 20 "end of the subscriber's stream" bash -c "! kill -0 $client_pid"
subscribe
wait_for 20 "StatusText with the new subscriber" \
  prop_is rdma-eventd.service StatusText "2 devices, 3 ports up, 0 down, 1 subscriber"
sim port down mlx5_0/1
wait_for 20 "port_err record after the upgrade" client_has '"event":"port_err"'
grep '"event":"port_err"' "$scratch/client.out" | jq -e '.severity == "critical"' >/dev/null ||
  fail "the restarted daemon does not apply the kept configuration: $(cat "$scratch/client.out")"

echo "PASS"
