// rdma-eventctl history --summary: per host and port (device-wide records: port 0), the count
// of each event name and the last health verdict in the window, from the journal's own fields,
// so that event names this client does not know are counted too. Memory holds a row per host
// and port, never the records.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>

#include "journal_query.h"

namespace rdma_eventd_fleet {

class Summary {
 public:
  void add(const JournalEntry& e);
  // A table for people (names shown with printable()), or one JSON object per line (names with
  // json_text(), escape.h).
  void print(std::FILE* out, bool json) const;

 private:
  struct Row {
    std::map<std::string, uint64_t> events;
    std::string health;
  };
  std::map<std::tuple<std::string, std::string, uint32_t>, Row> rows_;
};

}  // namespace rdma_eventd_fleet
