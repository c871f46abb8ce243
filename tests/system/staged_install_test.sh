#!/usr/bin/env bash
# A staged install (DESTDIR=ROOT cmake --install) puts every file where it belongs, and what it
# installed works from there: the daemon, rdma-eventctl and rdma-sim run, the client library
# builds a C program through its pkg-config file, journalctl indexes the catalog, and a second
# install keeps an edited configuration. Run by ctest (environment in CMakeLists.txt).
set -euo pipefail
: "${BUILD_DIR:?run it through ctest}"

# shellcheck source-path=SCRIPTDIR source=test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

scratch=$(mktemp -d /tmp/rdma-stage-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
root=$scratch/root
DESTDIR=$root "$CMAKE_COMMAND" --install "$BUILD_DIR" >"$scratch/install.log" ||
  fail "cmake --install failed: $(cat "$scratch/install.log")"

step "files"
expected=(
  "$SBIN_DIR/rdma-eventd"
  "$BIN_DIR/rdma-eventctl"
  "$LIB_DIR/librdma-eventd.so.2"
  "$LIB_DIR/librdma-eventd.so"
  "$LIB_DIR/pkgconfig/rdma-eventd.pc"
  "$UNIT_DIR/rdma-eventd.service"
  "$UNIT_DIR/rdma-eventd.socket"
  "$UNIT_DIR/rdma-eventd-metrics.service"
  "$UNIT_DIR/rdma-eventd-slurm.service"
  "$SBIN_DIR/rdma-eventd-slurm"
  "$INSTALL_PREFIX/lib/rdma-eventd/prolog-rdma-wait"
  "$INSTALL_PREFIX/lib/rdma-eventd/rdma-eventd-slurm-once"
  "$DOC_DIR/examples/node-problem-detector/rdma-eventd.json"
  "$DOC_DIR/metrics.md"
  "$DOC_DIR/examples/prometheus/rdma-eventd.rules.yml"
  "$DOC_DIR/examples/grafana/rdma-eventd.json"
  "$DOC_DIR/examples/grafana/rdma-eventd.jsonnet"
  "$UDEV_RULES_DIR/60-rdma-eventd.rules"
  "$SYSUSERS_DIR/rdma-eventd.conf"
  "$CATALOG_DIR/rdma-eventd.catalog"
  "$SYSCONF_DIR/rdma-eventd/rdma-eventd.json"
  "$DOC_DIR/operations.md"
  "$DOC_DIR/configuration.md"
  "$DOC_DIR/records.md"
  "$DOC_DIR/protocol.md"
  "$DOC_DIR/README.md"
  "$DOC_DIR/rdma-eventd.json"
  "$BIN_DIR/rdma-sim"
  "$INSTALL_PREFIX/lib/rdma-sim/libibverbs.so.1"
  "$INSTALL_PREFIX/share/rdma-sim/topologies/two-adapters.json"
)
# The manual pages, when this build has them (docs/man: without scdoc it has none, and the
# test docs.man_pages fails saying so).
for page in rdma-eventd.8 rdma-eventd-slurm.8 rdma-eventctl.1 rdma-eventd.json.5 librdma-eventd.3 rdma-sim.1; do
  if [ -f "$BUILD_DIR/docs/man/$page" ]; then
    expected+=("$MAN_DIR/man${page##*.}/$page")
  fi
done
for f in "${expected[@]}"; do
  [ -e "$root$f" ] || fail "missing $f"
  echo "$f"
done
# The public headers, and only they: the library's internal ones (lib/internal) stay out.
headers=$(cd "$root$INCLUDE_DIR" && find . -type f | sort | tr '\n' ' ')
want="./rdma_eventd/client.h ./rdma_eventd/client.hpp ./rdma_eventd/export.h \
./rdma_eventd/report_verbs.h ./rdma_eventd/version.h "
[ "$headers" = "$want" ] || fail "installed headers: $headers; expected: $want"
echo "$headers"
# The library's soname is its ABI's, and the link names it.
soname=$(objdump -p "$root$LIB_DIR/librdma-eventd.so" | awk '/SONAME/ {print $2}')
[ "$soname" = librdma-eventd.so.2 ] || fail "the library's soname is '$soname'"
# Nothing outside ROOT: every path cmake reports installing is under it.
if grep -- '-- Installing: ' "$scratch/install.log" | grep -v -- "-- Installing: $root/"; then
  fail "installed outside DESTDIR"
fi
[ -x "$root$SBIN_DIR/rdma-eventd" ] && [ -x "$root$BIN_DIR/rdma-eventctl" ] ||
  fail "the programs are not executable"

step "the programs run from the staged tree"
export LD_LIBRARY_PATH=$root$LIB_DIR
"$root$SBIN_DIR/rdma-eventd" --version | grep -q '^rdma-eventd ' || fail "rdma-eventd --version"
# The daemon's default configuration is the installed one.
"$root$SBIN_DIR/rdma-eventd" --help | grep -qF "$SYSCONF_DIR/rdma-eventd/rdma-eventd.json" ||
  fail "rdma-eventd --help names another default configuration"
"$root$SBIN_DIR/rdma-eventd" --check-config -c "$root$SYSCONF_DIR/rdma-eventd/rdma-eventd.json" ||
  fail "the installed configuration does not check"
"$root$BIN_DIR/rdma-eventctl" --help >/dev/null || fail "rdma-eventctl --help"
# rdma-sim finds its stand-in library where it was installed, beside its bin/ directory.
standin_dir=$(env -u LD_LIBRARY_PATH "$root$BIN_DIR/rdma-sim" --json env | jq -r .LD_LIBRARY_PATH)
[ "$standin_dir" = "$root$INSTALL_PREFIX/lib/rdma-sim" ] ||
  fail "rdma-sim looks for its stand-in library in $standin_dir"
grep -qx "ExecStart=$SBIN_DIR/rdma-eventd --foreground" "$root$UNIT_DIR/rdma-eventd.service" ||
  fail "the service does not run $SBIN_DIR/rdma-eventd"
unset LD_LIBRARY_PATH

step "the client library through pkg-config"
flags=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root$LIB_DIR/pkgconfig \
  pkg-config --cflags --libs rdma-eventd) || fail "pkg-config does not find rdma-eventd"
echo "$flags"
cat >"$scratch/client.c" <<'EOF'
#include <rdma_eventd/client.h>
#include <stdio.h>
int main(void) {
  struct rdmaev_filter* f = NULL;
  if (rdmaev_filter_new(&f) != 0) return 1;
  int rc = rdmaev_filter_add_event(f, "port_err");
  rdmaev_filter_delete(f);
  printf("%s\n", rc == 0 ? "filter" : rdmaev_strerror(rc));
  return 0;
}
EOF
# A sanitized build's library needs the sanitizers' runtime in the program too.
sanitize=${SANITIZER_FLAGS:-}
# shellcheck disable=SC2086  # flags are words
cc -std=c11 -Wall -Werror $sanitize "$scratch/client.c" -o "$scratch/client" $flags ||
  fail "a C program does not build against the staged library"
[ "$(LD_LIBRARY_PATH=$root$LIB_DIR "$scratch/client")" = filter ] || fail "the C program fails"

# The C++ API from the installed headers alone: header-only over the C API, so it includes
# nothing that is not installed and needs nothing but the C API's symbols.
cat >"$scratch/client.cc" <<'EOF'
#include <rdma_eventd/client.hpp>
#include <iostream>
int main() {
  rdmaev::Filter filter;
  const rdmaev::Status bad = filter.add_event("port_down");
  const rdmaev::Status good = filter.add_event("port_err");
  rdmaev::Client client;
  const rdmaev::Status status =
      rdmaev::Client::connect("/nonexistent/socket", std::chrono::milliseconds(10), client);
  std::cout << rdmaev::status_name(bad) << ", " << rdmaev::status_name(good) << ", "
            << client.connected() << ", " << rdmaev::status_name(status) << "\n";
  return 0;
}
EOF
# shellcheck disable=SC2086  # flags are words
c++ -std=c++17 -Wall -Werror $sanitize "$scratch/client.cc" -o "$scratch/client++" $flags ||
  fail "a C++ program does not build against the staged headers and library"
out=$(LD_LIBRARY_PATH=$root$LIB_DIR "$scratch/client++")
[ "$out" = "RDMAEV_E_INVAL, RDMAEV_OK, 0, RDMAEV_E_CONNECT" ] || fail "the C++ program says '$out'"

step "the journal catalog"
journalctl --root="$root" --update-catalog || fail "journalctl cannot index the catalog"
ids=$(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' "$root$CATALOG_DIR/rdma-eventd.catalog" | sort)
listed=$(journalctl --root="$root" --list-catalog | awk '/ rdma-eventd: /{print $1}' | sort)
[ -n "$ids" ] && [ "$ids" = "$listed" ] || fail "catalog entries $ids; journalctl lists $listed"

step "a reinstall keeps an edited configuration"
echo '{"log_level": "debug"}' >"$root$SYSCONF_DIR/rdma-eventd/rdma-eventd.json"
DESTDIR=$root "$CMAKE_COMMAND" --install "$BUILD_DIR" >/dev/null
[ "$(cat "$root$SYSCONF_DIR/rdma-eventd/rdma-eventd.json")" = '{"log_level": "debug"}' ] ||
  fail "the reinstall replaced the configuration"
echo "PASS"
