// rdma-eventctl status's table of ports (eventctl/format.h): a rate that is not known reads
// "unknown", never a link at 0 Gb/s.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "format.h"
#include "port_fixtures.h"

namespace rdma_eventctl {
namespace {

using namespace rdma_eventd;

TEST(EventctlStatus, TheRateColumnSaysUnknownWhereTheRateIsNotKnown) {
  StatusReply s;
  PortInfo xdr = daemon::active_ib(1, 7);
  xdr.speed = LinkSpeed::kXdr;
  PortInfo unknown = xdr;
  unknown.port = 2;
  unknown.speed = LinkSpeed::kUnknown;
  s.devices = {{"mlx5_0", "0c42:a103:00f6:5e44", {{xdr, 1, 1}, {unknown, 1, 1}}}};
  const std::string text = format_status(s, 1, false);
  // The table's rows of mlx5_0, port 1's first.
  std::vector<std::string> rows;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    if (text.compare(at, 6, "mlx5_0") == 0) rows.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  ASSERT_EQ(rows.size(), 2u) << text;
  EXPECT_NE(rows[0].find(" 800 Gb/s "), std::string::npos) << text;
  EXPECT_NE(rows[1].find(" unknown "), std::string::npos) << text;
  EXPECT_EQ(rows[1].find("Gb/s"), std::string::npos) << text;
}

}  // namespace
}  // namespace rdma_eventctl
