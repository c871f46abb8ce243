// The fixed parts of rdma-eventctl history --html's page (incidents_html.cc draws the rest):
// its head and style, the legend, the host search, and its script. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "incident.h"

namespace rdma_eventd_fleet {

// An incident class's color, in the bands and the table.
std::string_view class_color(IncidentClass c);

struct PageCounts {
  size_t hosts;
  size_t rows;
  size_t per_row;  // hosts a row: the search finds a host's row from its place in name order
  size_t incidents;
};

// From <!DOCTYPE html> to the summary line; `notice` (a line in red: the read was incomplete)
// is escaped.
std::string page_head(const PageCounts& counts, std::string_view notice);
std::string legend();
// A field that finds a host's row (the names are in the page's <datalist id="hostnames">, in
// name order), also from the address: page.html#host=NAME.
std::string host_search();
// The script, then the end of the page.
std::string page_tail();

}  // namespace rdma_eventd_fleet
