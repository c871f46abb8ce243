#!/usr/bin/env bash
# Makes sure that the container tests' Debian 12 root file system (container_lib.sh) is in the
# cache, downloading it with debootstrap when it is not: `scripts/bootstrap.sh test` runs this in
# the background while it builds, so that on a fresh machine the first container test finds
# the root ready instead of downloading it while the other tests wait for a slot.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=container_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/container_lib.sh"
command -v debootstrap >/dev/null || fail "debootstrap is missing: scripts/bootstrap.sh deps installs it"
container_scratch=$(mktemp -d /tmp/rdma-container-root-XXXXXX)
trap 'rm -rf "$container_scratch"' EXIT
container_root
step "the container's root file system is ready: $rootfs"
