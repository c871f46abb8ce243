#!/bin/sh
# journal_fleet.sh DIR GENERATOR: writes the fleet of journal files that journal_files_test.cc
# reads, 200 hosts of rdma-journal-gen's "many-hosts" scenario, a file each, into DIR (made anew),
# and what the generator said into DIR.out. Each file is 8 MiB, allocated and mostly empty: the
# empty blocks are given back (1.6 GB allocated, about 60 MB kept). ctest runs it once for all
# of those tests (the fixture journal_fleet, tests/integration/CMakeLists.txt); a test program
# run by hand, outside ctest, runs it itself.
set -eu
dir=$1 gen=$2
rm -rf "$dir" "$dir.out" "$dir.partial"
mkdir -p "$dir.partial"
"$gen" --scenario many-hosts --hosts 200 --output "$dir.partial" >"$dir.partial/out"
for f in "$dir.partial"/*.journal; do
  fallocate --dig-holes "$f"
done
mv "$dir.partial/out" "$dir.out"
mv "$dir.partial" "$dir"
