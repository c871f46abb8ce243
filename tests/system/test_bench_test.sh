#!/usr/bin/env bash
# system.test_bench: installing the test bench starts no service and enables none, under systemd
# as PID 1. A Debian 12 container boots (container_lib.sh's cached root); bootstrap.sh itself,
# as `scripts/bootstrap.sh test` runs it (its `install` command: install_packages), installs
# there, from the Debian archive with this host's apt sources, every package of its sets that
# ships a systemd unit or an init script (as this host's package database says: `test` installed
# them here) and that the container lacks: Slurm's controller and node daemon, munge,
# Prometheus, journal-remote, udev, systemd-container. The container has a site's own
# policy-rc.d, which allows everything. Then:
#   - no unit of a package that the install added is active or enabled, no unit at all became
#     active, and the site's policy-rc.d is back as it was;
#   - the packages' maintainer scripts did ask for their units to be enabled (deb-systemd-helper
#     knows them), so that the check above is not vacuous;
#   - the control: prometheus-node-exporter, left out above, installed with a plain apt-get
#     under the same policy, is running and enabled at once. Without install_packages, every
#     service above would be too.
# Needs root and the network that `test` itself needs (apt). Run by ctest.
set -euo pipefail
: "${SOURCE_DIR:?run it through ctest}"

# shellcheck source-path=SCRIPTDIR source=container_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/container_lib.sh"

control=prometheus-node-exporter
site_policy=$'#!/bin/sh\n# the site\'s own policy: every action allowed\nexit 0'

diagnostics() {
  echo "--- units active in the container" >&2
  timeout 20 nsenter -t "$C" -m -u -i -n -p -C systemctl list-units --no-pager --no-legend \
    --state=active >&2 || true
  tail -40 "$scratch/install.log" >&2 2>/dev/null || true
}

# in_container COMMAND...: as inside, with time for apt.
in_container() { timeout 600 nsenter -t "$C" -m -u -i -n -p -C "$@"; }
# The active units, but for the mounts of systemd's own services' credentials
# (/run/credentials/UNIT): systemd mounts one when such a service runs again, as
# systemd-tmpfiles-setup.service may during the packages' install; no package's service.
active_units() {
  inside systemctl list-units --no-pager --no-legend --plain --state=active | awk '{print $1}' |
    grep -v '^run-credentials-.*\.mount$' | sort
}
container_packages_now() { inside dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '/^ii/ {print $2}' | sort; }

# The packages of bootstrap.sh's sets that ship a unit or an init script, as installed here.
mapfile -t with_services < <(for p in $("$SOURCE_DIR/scripts/bootstrap.sh" packages test); do
  [ "$p" = "$control" ] && continue
  # grep -c reads it all: grep -q would leave dpkg-query to die of SIGPIPE, failing the pipe.
  dpkg-query -L "$p" 2>/dev/null |
    grep -cE '^/(usr/)?lib/systemd/system/[^/@]+\.(service|socket|timer)$|^/etc/init\.d/' >/dev/null &&
    echo "$p"
done)
for p in slurmctld slurmd prometheus; do
  [[ " ${with_services[*]} " == *" $p "* ]] ||
    fail "$p is not installed here with its units: scripts/bootstrap.sh deps installs it"
done

container_setup
scratch=$container_scratch

step "booting systemd in a container with this tree's scripts/ and the host's apt sources"
container_boot --bind-ro="$SOURCE_DIR/scripts:/opt/rdma-eventd/scripts" --bind-ro=/etc/apt:/opt/host-apt
inside bash -c 'cp -a /opt/host-apt/. /etc/apt/ && rm -f /etc/apt/sources.list.d/*.disabled*' ||
  fail "cannot copy the host's apt sources in"
printf '%s\n' "$site_policy" | inside tee /usr/sbin/policy-rc.d >/dev/null
inside chmod 755 /usr/sbin/policy-rc.d
packages_before=$(container_packages_now)
units_before=$(active_units)

step "bootstrap.sh install: ${with_services[*]}"
in_container /opt/rdma-eventd/scripts/bootstrap.sh install "${with_services[@]}" \
  >"$scratch/install.log" 2>&1 || fail "bootstrap.sh install failed (its log above)"
mapfile -t added < <(comm -13 <(echo "$packages_before") <(container_packages_now))
[ ${#added[@]} -gt 0 ] || fail "the install added no package"
echo "added: ${added[*]}"
for p in slurmctld slurmd munge prometheus; do
  [[ " ${added[*]} " == *" $p "* ]] || fail "$p was not installed in the container"
done

step "no unit of theirs active or enabled, no unit became active"
mapfile -t units < <(inside dpkg-query -L "${added[@]}" |
  sed -nE 's#^/(usr/)?lib/systemd/system/([^/@]+\.(service|socket|timer|path))$#\2#p' | sort -u)
[ ${#units[@]} -gt 0 ] || fail "the added packages ship no unit"
asked=0
for unit in "${units[@]}"; do
  state=$(inside systemctl is-active "$unit" || true)
  [ "$state" = inactive ] || fail "$unit is $state after the install"
  enabled=$(inside systemctl is-enabled "$unit" || true)
  [ "$enabled" != enabled ] || fail "$unit is enabled after the install"
  # debian-installed: the package's scripts enabled it once (deb-systemd-helper's state).
  if inside env DPKG_MAINTSCRIPT_PACKAGE=rdma-eventd-test deb-systemd-helper debian-installed "$unit"; then
    asked=$((asked + 1))
  fi
done
echo "units checked: ${units[*]}"
new_units=$(comm -13 <(echo "$units_before") <(active_units))
[ -z "$new_units" ] || fail "units active after the install that were not before: $new_units"
[ "$(inside cat /usr/sbin/policy-rc.d)" = "$site_policy" ] ||
  fail "the site's policy-rc.d is not back: $(inside cat /usr/sbin/policy-rc.d)"
inside test ! -e /usr/sbin/policy-rc.d.rdma-eventd-saved || fail "the saved policy-rc.d was left"

step "the packages asked for their units to be enabled ($asked of ${#units[@]})"
[ "$asked" -ge 3 ] || fail "only $asked units were enabled by their packages' scripts: the check proves little"

step "the control: $control installed with a plain apt-get starts at once"
in_container env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
  "$control" >>"$scratch/install.log" 2>&1 || fail "apt-get install $control failed"
wait_for 30 "$control.service active" prop_is "$control.service" ActiveState active
[ "$(inside systemctl is-enabled "$control.service")" = enabled ] ||
  fail "$control.service is not enabled by a plain install"
step "passed"
