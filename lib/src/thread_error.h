// The calling thread's last error from a call that has no handle to keep it in
// (rdmaev_connect, rdmaev_report, rdmaev_reporter_open): rdmaev_last_error(NULL) returns it.
#pragma once

#include <string>

namespace rdma_eventd {

std::string& thread_last_error();

}  // namespace rdma_eventd
