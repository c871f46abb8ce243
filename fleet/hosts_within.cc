#include "hosts_within.h"

namespace rdma_eventd_fleet {

void HostsWithin::add(int64_t time_us, const std::string* host) {
  // The window ending at this signal: [time - window, time]. Every window worth measuring ends
  // at a signal, so measuring these finds the best one.
  while (!window_.empty() && window_.front().time_us < time_minus(time_us, window_us_)) {
    auto it = in_window_.find(window_.front().host);
    if (--it->second == 0) in_window_.erase(it);
    window_.pop_front();
  }
  window_.push_back({time_us, host});
  ++in_window_[host];
  every_host_.insert(host);
  best_.hosts_in_all = every_host_.size();
  if (in_window_.size() > best_.hosts) {
    best_.hosts = in_window_.size();
    best_.signals = window_.size();
    best_.spread_us = time_span(window_.front().time_us, time_us);
  }
}

}  // namespace rdma_eventd_fleet
