// rdma-eventctl history --html: one self-contained page (inline CSS, SVG and a few lines of
// script; nothing loaded from anywhere) with a timeline of the fleet, one row per host (rows of
// several hosts when there are many), port downs, ups, verdicts and other faults as marks, the
// incidents as bands with their class, a search that finds a host's row, and a table of the
// incidents below. Pure: a renderer, but for the temporary file that holds a fleet's marks.
//
// Bounded by design, whatever the number of hosts, records and incidents:
// - the marks are kept as 16 bytes each, beyond a megabyte in a temporary file (mark_store.h),
//   and drawn aggregated: one mark per row and pixel, whose title counts what it stands for;
// - the incidents are kept as 40 bytes each; with more than kBandsDrawn the bands are drawn
//   as one run per class and stretch of pixels, with their count;
// - the table holds the newest `table_rows` incidents (rdma-eventctl history --incidents
//   lists every one);
// - the axis spans the incidents that are not outliers (timeline_axis.h); the others are
//   listed under the timeline, and marks outside it counted.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "faults.h"
#include "incident.h"
#include "mark_store.h"

namespace rdma_eventd_fleet {

// Text made safe inside HTML and SVG elements and attribute values: printable() (escape.h), so
// that a name's control characters and bytes that are not UTF-8 show as \xNN, then entities.
std::string html_escape(std::string_view text);

class Timeline {
 public:
  static constexpr size_t kBandsDrawn = 300;

  // At most `max_rows` rows: with more hosts, each row holds several, in name order.
  explicit Timeline(size_t max_rows = 50, size_t table_rows = 1000)
      : max_rows_(max_rows), table_rows_(table_rows) {}

  // An entry of the journal: a mark on its host's row (port_err down, port_active up,
  // port_health its verdict, any other fault by its name). Every host that has an entry gets a
  // row.
  void add(const FaultInput& in);
  // A closed incident: a band, and a row of the table.
  void add(const Incident& incident);

  // The page. `notice`: a line shown at its top (the read was incomplete), empty for none.
  std::string html(std::string_view notice = {}) const;

  // Why some marks were not kept or could not be read back ("writing a temporary file in
  // /var/tmp: No space left on device"); empty when every one was drawn. The page says it too.
  const std::string& problem() const { return marks_.error(); }

 private:
  struct Host {
    std::string name;
    uint32_t marks = 0;
    uint32_t incidents = 0;
  };
  struct Band {
    int64_t start_us;
    int64_t end_us;
    uint64_t records;
    uint32_t hosts;
    uint32_t first_host;  // its first host's number
    uint32_t arrival;     // its index in bands_
    IncidentClass cls;
  };
  static_assert(sizeof(Band) == 40);
  struct Detail {  // what the table shows of one of the newest incidents
    int64_t start_us;
    uint32_t arrival;
    std::string evidence;
    std::vector<std::string> hosts;  // the first few
  };
  struct Layout;

  uint32_t host_number(std::string_view name);
  void draw_bands(const Layout& l, const std::vector<uint32_t>& by_start, std::string& out) const;
  void draw_marks(const Layout& l, std::string& out) const;
  void draw_table(const std::vector<uint32_t>& number, std::string& out) const;

  size_t max_rows_;
  size_t table_rows_;
  std::deque<Host> hosts_;  // stable: names_ views their names
  std::unordered_map<std::string_view, uint32_t> names_;
  MarkStore marks_;
  std::vector<Band> bands_;
  std::vector<Detail> details_;  // a min-heap by start: the newest table_rows_ incidents
};

}  // namespace rdma_eventd_fleet
