// rdma-eventctl history --html: one self-contained page (inline CSS, SVG and a few lines of
// script; nothing loaded from anywhere) with a timeline of the fleet, one row per host (rows of
// several hosts when there are many), port downs, ups and verdicts as marks, the incidents as
// bands with their class, and a table of the incidents below. Pure: a renderer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "faults.h"
#include "incident.h"

namespace rdma_eventd_fleet {

// Text made safe inside HTML and SVG elements and attribute values: printable() (escape.h), so
// that a name's control characters and bytes that are not UTF-8 show as \xNN, then entities.
std::string html_escape(std::string_view text);

class Timeline {
 public:
  // At most `marks_per_host` marks kept per host (the first ones; the rest are counted), and at
  // most `max_rows` rows: with more hosts, each row holds several, in name order.
  explicit Timeline(size_t marks_per_host = 200, size_t max_rows = 50)
      : marks_per_host_(marks_per_host), max_rows_(max_rows) {}

  // An entry of the journal: a mark on its host's row (port_err down, port_active up,
  // port_health its verdict, any other fault by its name). Every host that has an entry gets a
  // row, and its time widens the timeline.
  void add(const FaultInput& in);
  // A closed incident: a band, and a row of the table.
  void add(const Incident& incident);

  std::string html() const;

 private:
  struct Mark {
    int64_t time_us;
    char kind;          // 'd' down, 'u' up, 'v' verdict, 'f' another fault
    std::string label;  // "mlx5_0/1 port_err", "mlx5_0/1 flapping"
    std::string verdict;
  };
  struct Host {
    std::vector<Mark> marks;
    uint64_t left_out = 0;
  };
  struct Band {
    int64_t start_us;
    int64_t end_us;
    IncidentClass cls;
    std::string evidence;
    std::vector<std::string> hosts;  // the first few
    size_t host_count;
    uint64_t records;
  };

  size_t marks_per_host_;
  size_t max_rows_;
  std::map<std::string, Host> hosts_;
  std::vector<Band> bands_;
  int64_t first_us_ = INT64_MAX;
  int64_t last_us_ = INT64_MIN;
};

}  // namespace rdma_eventd_fleet
