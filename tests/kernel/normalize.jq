# The kernel tests' normalized records (guest.sh, simulator_test.sh): run with
#   jq -c -S -s --argjson base SEQ -f normalize.jq RECORDS
# on a scenario's records (base: the seq before its first). seq, stream, time, host and since
# are masked and cause_seq made relative to base. The GID entries of the gid_change records are
# taken out of them into one last line, {"gid_changes": [{"removed": ...}, {"added": ...}]} in
# order: how the daemon spreads the entries over the records depends on when it queried the
# table (docs/records.md, gid_change), so when the kernel applies two changes before the daemon
# reads the first event, one record carries both; the entries and their order do not change.
# A port_health record is placed right after the record that caused it (its cause_seq): the
# daemon sends a batch's verdicts after the batch's records (docs/records.md, port_health), so
# when the kernel queues two events before the daemon reads the first (rxe's two PORT_ACTIVE
# for one link up), the first one's verdict follows the second; what it was caused by does
# not change. Records without a seq (the expected ones) are numbered in their order.
def masked($base):
  del(.seq, .stream, .time, .host, .since)
  | if has("cause_seq") and .cause_seq > 0 then .cause_seq -= $base else . end;
def place($base):
  to_entries
  | map(.value as $r
        | {at: (if $r.event == "port_health" and ($r.cause_seq // 0) > 0
                then $r.cause_seq - $base + 0.5
                else ($r.seq // ($base + .key + 1)) - $base end),
           record: $r})
  | sort_by(.at) | map(.record);
place($base) | map(masked($base)) as $records
| ($records
   | map(select(.event == "gid_change")
         | (.gids_removed | map({removed: .})) + (.gids_added | map({added: .})))
   | add // []) as $gids
| ($records[] | if .event == "gid_change" then del(.gids_added, .gids_removed) else . end),
  (if $gids == [] then empty else {gid_changes: $gids} end)
