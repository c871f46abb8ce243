// What the C API's two translation units (client_c.cc: clients, filters, messages, the waiting
// report; reporter.cc: reporters) share: the exception barrier at every entry point, the
// calling thread's last error and the checked copy of a caller's struct rdmaev_event_report.
// The public structs stay incomplete in both files. Their debug information, from which
// tests/unit/abi_check.sh reads the ABI, still holds the C++ types the two files use; the
// check drops every type the public headers do not define (lib/abi/public-types.suppr), so
// the baseline holds the public API only.
#pragma once

#include <cstddef>
#include <new>
#include <string>

#include "rdma_eventd/client.h"
#include "rdma_eventd/protocol.h"

namespace rdma_eventd::c_api {

// No exception crosses into C: an allocation that fails is RDMAEV_E_NOMEM.
template <typename Fn>
int guarded(Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return RDMAEV_E_NOMEM;
  } catch (...) {
    return RDMAEV_E_INVAL;
  }
}

// The error of the calling thread's last call that has no handle to keep it in
// (rdmaev_connect, rdmaev_report, rdmaev_reporter_open): rdmaev_last_error(NULL).
std::string& thread_last_error();

// struct rdmaev_event_report as ABI 2.0 has it: every member up to detail. A caller's struct is
// at least this large; a member added later is read only when the caller's size reaches its end
// (offsetof(rdmaev_event_report, member) + sizeof(member)), so a program built against an older
// client.h keeps working, and one built against a newer one has its unknown members ignored.
inline constexpr size_t kReportSizeV2 =
    offsetof(rdmaev_event_report, detail) + sizeof(rdmaev_event_report::detail);

// The caller's report as the protocol's: RDMAEV_OK, or RDMAEV_E_INVAL with *error saying why.
int copy_report(const rdmaev_event_report* report, Report& out, std::string& error);

}  // namespace rdma_eventd::c_api
