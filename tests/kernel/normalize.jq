# The kernel tests' normalized records (guest.sh, simulator_test.sh): run with
#   jq -c -S -s --argjson base SEQ -f normalize.jq RECORDS
# on a scenario's records (base: the seq before its first). seq, stream, time, host and since
# are masked and cause_seq made relative to base. The GID entries of the gid_change records are
# taken out of them into one last line, {"gid_changes": [{"removed": ...}, {"added": ...}]} in
# order: how the daemon spreads the entries over the records depends on when it queried the
# table (docs/records.md, gid_change), so when the kernel applies two changes before the daemon
# reads the first event, one record carries both; the entries and their order do not change.
def masked($base):
  del(.seq, .stream, .time, .host, .since)
  | if has("cause_seq") and .cause_seq > 0 then .cause_seq -= $base else . end;
map(masked($base)) as $records
| ($records
   | map(select(.event == "gid_change")
         | (.gids_removed | map({removed: .})) + (.gids_added | map({added: .})))
   | add // []) as $gids
| ($records[] | if .event == "gid_change" then del(.gids_added, .gids_removed) else . end),
  (if $gids == [] then empty else {gid_changes: $gids} end)
