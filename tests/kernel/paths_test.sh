#!/usr/bin/env bash
# kernel.paths: the kernel tests run from a clone anywhere. The guest has tmpfs of its own on /tmp,
# /root, /var/tmp and more, where a newcomer's clone often is; run.sh keeps the directories the
# guest runs from visible at their own paths over them. This boots a guest (guest_paths.sh)
# whose script is in a directory under /tmp with a space in its name, whose output is under
# /root, and which must see directories under /root and /var/tmp (--keep) with the host's
# contents, and run the build's programs; and which loads netdevsim built from a directory with a
# space in its name (kbuild cannot build there: netdevsim_build.sh builds elsewhere and copies).
#   tests/kernel/paths_test.sh BUILD_DIR
set -euo pipefail
build=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
token=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
root_dir=$(mktemp -d /root/rdma-eventd-kt.XXXXXX)
tmp_dir=$(mktemp -d "/tmp/rdma-eventd kt.XXXXXX")
vartmp_dir=$(mktemp -d /var/tmp/rdma-eventd-kt.XXXXXX)
trap 'rm -rf "$root_dir" "$tmp_dir" "$vartmp_dir"' EXIT
mkdir "$tmp_dir/guest dir"
cp "$here/guest_paths.sh" "$here/wait_lib.sh" "$tmp_dir/guest dir/"
echo "$token" >"$root_dir/marker"
echo "$token" >"$vartmp_dir/marker"
rc=0
bash "$here/run.sh" --build-dir "$build" --out "$root_dir/out" \
  --guest "$tmp_dir/guest dir/guest_paths.sh" --keep "$root_dir" --keep "$vartmp_dir" \
  --netdevsim "$tmp_dir/netdevsim dir" \
  --timeout 150 TOKEN="$token" SEE_ROOT="$root_dir" SEE_VARTMP="$vartmp_dir" || rc=$?
cat "$root_dir/out/share/results" 2>/dev/null || echo "kernel.paths: the guest wrote no results" >&2
exit "$rc"
