#!/usr/bin/env bash
# The installed units as systemd reads them, without systemd running:
#  - `systemd-analyze verify` of rdma-eventd.service and rdma-eventd.socket prints nothing at all
#    (it reports unknown keys and bad values as warnings with exit status 0: any output fails);
#  - `systemd-analyze security --offline=yes` scores the service's exposure at 1.2 or less;
#  - rdma-eventd-metrics.service: verify prints nothing, and its exposure is 1.0 or less;
#  - rdma-eventd-slurm.service: verify prints nothing, and its exposure is 1.6 or less (it keeps
#    the network for slurmctld and runs as root for scontrol: docs/scheduler.md);
#  - udev reads the rule without complaint.
# The units are the staged install's (DESTDIR), so they name the paths `cmake --install` puts
# things at. verify checks that ExecStart= exists: in a private mount namespace the staged
# daemon is mounted where the unit says it is. Run by ctest (environment in CMakeLists.txt).
set -euo pipefail
: "${BUILD_DIR:?run it through ctest}"

max_exposure=1.2

# shellcheck source-path=SCRIPTDIR source=test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

scratch=$(mktemp -d /tmp/rdma-units-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
root=$scratch/root
for component in Unspecified service; do
  DESTDIR=$root "$CMAKE_COMMAND" --install "$BUILD_DIR" --component "$component" >/dev/null
done
service=$root$UNIT_DIR/rdma-eventd.service
socket=$root$UNIT_DIR/rdma-eventd.socket
[ -f "$service" ] && [ -f "$socket" ] || fail "the staged install has no units in $root$UNIT_DIR"
grep -qx "ExecStart=$SBIN_DIR/rdma-eventd --foreground" "$service" ||
  fail "ExecStart= does not name $SBIN_DIR/rdma-eventd"
[ -d "$SBIN_DIR" ] || fail "$SBIN_DIR does not exist on this machine: nowhere to mount the staged daemon"

step "systemd-analyze verify"
set +e
unshare --mount --propagation private bash -c '
  mount --bind "$1" "$2" && exec systemd-analyze verify --man=no "$3" "$4"' \
  verify "$root$SBIN_DIR" "$SBIN_DIR" "$service" "$socket" >"$scratch/verify.out" 2>&1
rc=$?
set -e
cat "$scratch/verify.out"
[ "$rc" -eq 0 ] || fail "systemd-analyze verify exited with $rc"
[ ! -s "$scratch/verify.out" ] || fail "systemd-analyze verify printed the warnings above"
echo "no warnings"

step "systemd-analyze security --offline=yes"
set +e
systemd-analyze security --offline=yes --no-pager "$service" >"$scratch/security.out" 2>&1
rc=$?
set -e
# The options that still cost something, and the score.
grep -v '✓' "$scratch/security.out" || true
[ "$rc" -eq 0 ] || fail "systemd-analyze security exited with $rc"
score=$(sed -n 's/.*Overall exposure level for rdma-eventd.service: \([0-9.]*\).*/\1/p' \
  "$scratch/security.out")
[ -n "$score" ] || fail "no exposure score in the output above"
awk -v s="$score" -v m="$max_exposure" 'BEGIN { exit !(s <= m) }' ||
  fail "exposure $score is above $max_exposure"
echo "exposure $score (at most $max_exposure)"

# check_follower_unit NAME BIN_DIR MAX: a follower's unit (its program in BIN_DIR of the staged
# install) passes systemd-analyze verify silently and its exposure is MAX or less.
check_follower_unit() {
  local name=$1 dir=$2 max=$3 unit rc score
  unit=$root$UNIT_DIR/$name.service
  [ -f "$unit" ] || fail "the staged install has no $UNIT_DIR/$name.service"
  set +e
  unshare --mount --propagation private bash -c '
    mount --bind "$1" "$2" && exec systemd-analyze verify --man=no "$3"' \
    verify "$root$dir" "$dir" "$unit" >"$scratch/verify-$name.out" 2>&1
  rc=$?
  set -e
  cat "$scratch/verify-$name.out"
  [ "$rc" -eq 0 ] && [ ! -s "$scratch/verify-$name.out" ] ||
    fail "systemd-analyze verify of $name.service: exit $rc, output above"
  systemd-analyze security --offline=yes --no-pager "$unit" >"$scratch/security-$name.out" 2>&1 ||
    fail "systemd-analyze security: $(cat "$scratch/security-$name.out")"
  score=$(sed -n "s/.*Overall exposure level for $name.service: \([0-9.]*\).*/\1/p" \
    "$scratch/security-$name.out")
  [ -n "$score" ] && awk -v s="$score" -v m="$max" 'BEGIN { exit !(s <= m) }' ||
    fail "$name.service exposure '$score' is not $max or less"
  echo "exposure $score (at most $max)"
}

step "rdma-eventd-metrics.service: verify, and exposure 1.0 or less (docs/metrics.md)"
check_follower_unit rdma-eventd-metrics "$BIN_DIR" 1.0

step "rdma-eventd-slurm.service: verify, and exposure 1.6 or less (docs/scheduler.md)"
grep -qx "ExecStart=$SBIN_DIR/rdma-eventd-slurm" "$root$UNIT_DIR/rdma-eventd-slurm.service" ||
  fail "ExecStart= does not name $SBIN_DIR/rdma-eventd-slurm"
check_follower_unit rdma-eventd-slurm "$SBIN_DIR" 1.6

step "udev rule"
rule=$root$UDEV_RULES_DIR/60-rdma-eventd.rules
[ -f "$rule" ] || fail "no udev rule at $rule"
[ -d /etc/udev/rules.d ] || fail "no /etc/udev/rules.d: install the udev package"
# udevadm test reads every rules file; with our rule alone in /etc/udev/rules.d it names it, and
# a problem in it is a line "PATH:LINE message". No RDMA device here: the rule cannot fire.
mkdir "$scratch/rules.d"
cp "$rule" "$scratch/rules.d/"
unshare --mount --propagation private bash -c '
  mount --bind "$1" /etc/udev/rules.d && exec udevadm test /sys/class/net/lo' \
  udev "$scratch/rules.d" >"$scratch/udev.out" 2>&1 || fail "udevadm test failed: $(cat "$scratch/udev.out")"
grep -F "Reading rules file: /etc/udev/rules.d/60-rdma-eventd.rules" "$scratch/udev.out" ||
  fail "udevadm did not read the rule"
if grep -F "/etc/udev/rules.d/60-rdma-eventd.rules:" "$scratch/udev.out"; then
  fail "udevadm reports the problems above in the rule"
fi
echo "PASS"
