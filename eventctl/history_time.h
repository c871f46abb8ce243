// The times `rdma-eventctl history --since/--until` take: a subset of journalctl's syntax
// (systemd.time(7)), in local time as journalctl reads them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rdma_eventctl {

// "2026-11-24", "2026-11-24 18:30", "2026-11-24 18:30:15" (also with a 'T' between date and
// time), "now", "today", "yesterday", "tomorrow", "@1764000000" (seconds since the epoch), and
// relative to now: "-1h", "-30min", "+2d", "-1h30min", "2h ago". Units: us, ms, s/sec/second(s),
// m/min/minute(s), h/hr/hour(s), d/day(s), w/week(s). Returns microseconds since the epoch, or
// nullopt for anything else.
std::optional<int64_t> parse_journal_time(std::string_view text, int64_t now_us);

}  // namespace rdma_eventctl
