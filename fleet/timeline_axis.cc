#include "timeline_axis.h"

#include <algorithm>

#include "incident.h"

namespace rdma_eventd_fleet {
namespace {

constexpr int64_t kDayUs = 86'400'000'000LL;
constexpr int64_t kDeviations = 10;

int64_t median(std::vector<int64_t>& v) {
  const auto middle = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), middle, v.end());
  return *middle;
}

}  // namespace

TimeFence incidents_fence(std::vector<int64_t> starts) {
  if (starts.size() < 3) return {};
  const int64_t m = median(starts);
  std::vector<int64_t> deviations;
  deviations.reserve(starts.size());
  for (const int64_t t : starts)
    deviations.push_back(t >= m ? time_span(m, t) : time_span(t, m));
  const int64_t deviation = std::max(median(deviations), kDayUs);
  const int64_t reach = deviation > std::numeric_limits<int64_t>::max() / kDeviations
                            ? std::numeric_limits<int64_t>::max()
                            : deviation * kDeviations;
  return {time_minus(m, reach), time_plus(m, reach)};
}

bool AxisSpan::add(int64_t t) {
  if (!fence_.contains(t)) return false;
  first_ = std::min(first_, t);
  last_ = std::max(last_, t);
  return true;
}

}  // namespace rdma_eventd_fleet
