// The C API: thin wrappers over rdma_eventd::Client. No exception crosses into C: the C++
// client reports through return codes, and the only throwing operations here (allocations) are
// caught at each entry point.
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "c_api.h"
#include "client/client.hpp"
#include "rdma_eventd/client.h"

using rdma_eventd::Client;
using rdma_eventd::ClientStatus;
using rdma_eventd::MessageKind;
using rdma_eventd::c_api::guarded;
using rdma_eventd::c_api::kReportSizeV2;

namespace {

// What the handles point to. The public structs rdmaev_client, rdmaev_filter and rdmaev_message
// stay incomplete, here too: this file's debug information, from which tests/unit/abi_check.sh
// reads the ABI, then holds none of the C++ behind them, which may change freely.
struct MessageBox {
  rdma_eventd::Message m;
};

struct ClientBox {
  std::unique_ptr<Client> client;
  MessageBox current;
  std::string error;  // for errors detected here, before the C++ client is involved
};

struct FilterBox {
  rdma_eventd::Filter f;
};

ClientBox* box(rdmaev_client* c) {
  return reinterpret_cast<ClientBox*>(c);
}
const ClientBox* box(const rdmaev_client* c) {
  return reinterpret_cast<const ClientBox*>(c);
}
FilterBox* box(rdmaev_filter* f) {
  return reinterpret_cast<FilterBox*>(f);
}
const FilterBox* box(const rdmaev_filter* f) {
  return reinterpret_cast<const FilterBox*>(f);
}
const MessageBox* box(const rdmaev_message* m) {
  return reinterpret_cast<const MessageBox*>(m);
}
rdmaev_client* handle(ClientBox* c) {
  return reinterpret_cast<rdmaev_client*>(c);
}
rdmaev_filter* handle(FilterBox* f) {
  return reinterpret_cast<rdmaev_filter*>(f);
}
const rdmaev_message* handle(const MessageBox* m) {
  return reinterpret_cast<const rdmaev_message*>(m);
}

std::string& connect_error() {
  return rdma_eventd::c_api::thread_last_error();
}

int code(ClientStatus s) {
  return static_cast<int>(s);
}

// Names in the schema's tables are views of string literals, so NUL-terminated.
const char* c_str(std::string_view literal) {
  return literal.data();
}

// The C API's kinds are MessageKind's values.
static_assert(RDMAEV_RECORD == static_cast<int>(MessageKind::kRecord) &&
              RDMAEV_SNAPSHOT == static_cast<int>(MessageKind::kSnapshot) &&
              RDMAEV_HELLO == static_cast<int>(MessageKind::kHello) &&
              RDMAEV_REPLY == static_cast<int>(MessageKind::kReply) &&
              RDMAEV_ERROR == static_cast<int>(MessageKind::kError) &&
              RDMAEV_LOST == static_cast<int>(MessageKind::kLost));

// Parses `text` as a pattern of the filter's `list` (devices or ports) and adds it.
template <typename Pattern>
int add_pattern(rdmaev_filter* filter, const char* text,
                std::vector<Pattern> rdma_eventd::Filter::*list) {
  if (!filter || !text) return RDMAEV_E_INVAL;
  return guarded([&]() -> int {
    auto p = Pattern::parse(text, nullptr);
    if (!p) return RDMAEV_E_INVAL;
    (box(filter)->f.*list).push_back(std::move(*p));
    return RDMAEV_OK;
  });
}

}  // namespace

std::string& rdma_eventd::c_api::thread_last_error() {
  thread_local std::string error;
  return error;
}

int rdma_eventd::c_api::copy_report(const rdmaev_event_report* report, Report& out,
                                    std::string& error) {
  if (!report) {
    error = "no report";
    return RDMAEV_E_INVAL;
  }
  if (report->size < kReportSizeV2) {
    error = "struct rdmaev_event_report's size is " + std::to_string(report->size) +
            ", less than " + std::to_string(kReportSizeV2) +
            ": start from RDMAEV_EVENT_REPORT_INIT";
    return RDMAEV_E_INVAL;
  }
  if (!report->device) {
    error = "the report names no device";
    return RDMAEV_E_INVAL;
  }
  out.event_type = report->event_type;
  out.device = report->device;
  out.port = report->port;
  out.object_id = report->object_id;
  out.detail = report->detail ? report->detail : "";
  return RDMAEV_OK;
}

extern "C" {

const char* rdmaev_strerror(int status) {
  return c_str(rdma_eventd::client_status_name(static_cast<ClientStatus>(status)));
}

int rdmaev_connect(const char* path, int timeout_ms, rdmaev_client** client) {
  if (!client) return RDMAEV_E_INVAL;
  *client = nullptr;
  return guarded([&]() -> int {
    std::unique_ptr<Client> c;
    std::string error;
    const ClientStatus s = Client::connect(path ? path : RDMAEV_DEFAULT_SOCKET,
                                           Client::Duration(timeout_ms), c, &error);
    if (s != ClientStatus::kOk) {
      connect_error() = error;
      return code(s);
    }
    auto* out = new ClientBox;
    out->client = std::move(c);
    *client = handle(out);
    return RDMAEV_OK;
  });
}

void rdmaev_close(rdmaev_client* client) {
  delete box(client);
}

const char* rdmaev_last_error(const rdmaev_client* client) {
  if (!client) return connect_error().c_str();
  return box(client)->error.empty() ? box(client)->client->last_error().c_str()
                                    : box(client)->error.c_str();
}

int rdmaev_get_fd(const rdmaev_client* client, int* fd) {
  if (!client || !fd) return RDMAEV_E_INVAL;
  *fd = box(client)->client->fd();
  return RDMAEV_OK;
}

int rdmaev_next(rdmaev_client* client, const rdmaev_message** msg) {
  if (!client || !msg) return RDMAEV_E_INVAL;
  return guarded([&]() -> int {
    const ClientStatus s = box(client)->client->next(box(client)->current.m);
    *msg = s == ClientStatus::kOk ? handle(&box(client)->current) : nullptr;
    return code(s);
  });
}

int rdmaev_wait(rdmaev_client* client, int timeout_ms) {
  if (!client) return RDMAEV_E_INVAL;
  return guarded(
      [&]() -> int { return code(box(client)->client->wait(Client::Duration(timeout_ms))); });
}

int rdmaev_next_wait(rdmaev_client* client, int timeout_ms, const rdmaev_message** msg) {
  if (!client || !msg) return RDMAEV_E_INVAL;
  return guarded([&]() -> int {
    const ClientStatus s =
        box(client)->client->next(box(client)->current.m, Client::Duration(timeout_ms));
    *msg = s == ClientStatus::kOk ? handle(&box(client)->current) : nullptr;
    return code(s);
  });
}

const char* rdmaev_stream(const rdmaev_client* client) {
  return client ? box(client)->client->hello().stream.c_str() : nullptr;
}

uint64_t rdmaev_hello_seq(const rdmaev_client* client) {
  return client ? box(client)->client->hello().seq : 0;
}

const char* rdmaev_daemon_version(const rdmaev_client* client) {
  return client ? box(client)->client->hello().version.c_str() : nullptr;
}

int rdmaev_filter_new(rdmaev_filter** filter) {
  if (!filter) return RDMAEV_E_INVAL;
  return guarded([&]() -> int {
    *filter = handle(new FilterBox);
    return RDMAEV_OK;
  });
}

void rdmaev_filter_delete(rdmaev_filter* filter) {
  delete box(filter);
}

int rdmaev_filter_add_event(rdmaev_filter* filter, const char* name) {
  if (!filter || !name) return RDMAEV_E_INVAL;
  auto kind = rdma_eventd::event_from_name(name);
  if (!kind) return RDMAEV_E_INVAL;
  return guarded([&]() -> int {
    box(filter)->f.events.push_back(*kind);
    return RDMAEV_OK;
  });
}

int rdmaev_filter_add_device(rdmaev_filter* filter, const char* pattern) {
  return add_pattern(filter, pattern, &rdma_eventd::Filter::devices);
}

int rdmaev_filter_add_port(rdmaev_filter* filter, const char* dev_port) {
  return add_pattern(filter, dev_port, &rdma_eventd::Filter::ports);
}

int rdmaev_filter_set_min_severity(rdmaev_filter* filter, const char* severity) {
  if (!filter || !severity) return RDMAEV_E_INVAL;
  auto s = rdma_eventd::severity_from_name(severity);
  if (!s) return RDMAEV_E_INVAL;
  box(filter)->f.min_severity = *s;
  return RDMAEV_OK;
}

int rdmaev_subscribe(rdmaev_client* client, const rdmaev_filter* filter, uint64_t* id) {
  if (!client) return RDMAEV_E_INVAL;
  return guarded([&]() -> int {
    return code(
        box(client)->client->subscribe(filter ? box(filter)->f : rdma_eventd::Filter{}, id));
  });
}

int rdmaev_snapshot(rdmaev_client* client, uint64_t* id) {
  if (!client) return RDMAEV_E_INVAL;
  return guarded([&]() -> int { return code(box(client)->client->snapshot(id)); });
}

int rdmaev_since(rdmaev_client* client, const char* stream, uint64_t seq, uint64_t* id) {
  if (!client) return RDMAEV_E_INVAL;
  return guarded(
      [&]() -> int { return code(box(client)->client->since(seq, stream ? stream : "", id)); });
}

int rdmaev_status(rdmaev_client* client, uint64_t* id) {
  if (!client) return RDMAEV_E_INVAL;
  return guarded([&]() -> int { return code(box(client)->client->status(id)); });
}

int rdmaev_report(const char* path, const struct rdmaev_event_report* report, int timeout_ms,
                  uint64_t* seq) {
  return guarded([&]() -> int {
    connect_error().clear();  // rdmaev_last_error(NULL) says why it failed
    rdma_eventd::Report r;
    if (const int status = rdma_eventd::c_api::copy_report(report, r, connect_error());
        status != RDMAEV_OK)
      return status;
    return code(rdma_eventd::report_event(path ? path : RDMAEV_DEFAULT_SOCKET, r,
                                          Client::Duration(timeout_ms), seq, &connect_error()));
  });
}

int rdmaev_ping(rdmaev_client* client, uint64_t* id) {
  if (!client) return RDMAEV_E_INVAL;
  return guarded([&]() -> int { return code(box(client)->client->ping(id)); });
}

int rdmaev_message_kind(const rdmaev_message* msg) {
  return msg ? static_cast<int>(box(msg)->m.kind()) : RDMAEV_E_INVAL;
}

const char* rdmaev_message_json(const rdmaev_message* msg) {
  return msg ? box(msg)->m.text().c_str() : nullptr;
}

uint64_t rdmaev_message_seq(const rdmaev_message* msg) {
  if (!msg) return 0;
  if (const auto* r = box(msg)->m.record()) return r->seq;
  if (const auto* s = box(msg)->m.snapshot()) return s->seq;
  if (const auto* r = box(msg)->m.reply()) return r->seq;
  if (const auto* h = box(msg)->m.hello()) return h->seq;
  return 0;
}

const char* rdmaev_message_event(const rdmaev_message* msg) {
  if (!msg) return nullptr;
  if (const auto* r = box(msg)->m.record()) return c_str(rdma_eventd::event_name(r->event));
  return box(msg)->m.snapshot() ? c_str(rdma_eventd::kSnapshotEvent) : nullptr;
}

const char* rdmaev_message_severity(const rdmaev_message* msg) {
  if (!msg) return nullptr;
  if (const auto* r = box(msg)->m.record()) return c_str(rdma_eventd::severity_name(r->severity));
  return box(msg)->m.snapshot() ? c_str(rdma_eventd::severity_name(rdma_eventd::Severity::kInfo))
                                : nullptr;
}

const char* rdmaev_message_device(const rdmaev_message* msg) {
  if (!msg) return nullptr;
  if (const auto* r = box(msg)->m.record()) return r->device.c_str();
  if (const auto* s = box(msg)->m.snapshot()) return s->device.c_str();
  return nullptr;
}

uint32_t rdmaev_message_port(const rdmaev_message* msg) {
  if (!msg) return 0;
  if (const auto* r = box(msg)->m.record()) return r->port;
  if (const auto* s = box(msg)->m.snapshot()) return s->port.port;
  return 0;
}

const char* rdmaev_message_port_state(const rdmaev_message* msg) {
  if (!msg) return nullptr;
  if (const auto* s = box(msg)->m.snapshot())
    return c_str(rdma_eventd::port_state_name(s->port.state));
  const auto* r = box(msg)->m.record();
  return r && r->port_info ? c_str(rdma_eventd::port_state_name(r->port_info->state)) : nullptr;
}

int rdmaev_message_lost(const rdmaev_message* msg, uint64_t* first_seq, uint64_t* last_seq,
                        uint64_t* records) {
  const rdma_eventd::Lost* lost = msg ? box(msg)->m.lost() : nullptr;
  if (!lost) return RDMAEV_E_INVAL;
  if (first_seq) *first_seq = lost->first_seq;
  if (last_seq) *last_seq = lost->last_seq;
  if (records) *records = lost->records;
  return RDMAEV_OK;
}

uint64_t rdmaev_message_request_id(const rdmaev_message* msg) {
  if (!msg) return 0;
  const std::string* id = box(msg)->m.reply()   ? &box(msg)->m.reply()->id
                          : box(msg)->m.error() ? &box(msg)->m.error()->id
                                                : nullptr;
  if (!id || id->empty() || id->find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::strtoull(id->c_str(), nullptr, 10);
}

const char* rdmaev_message_op(const rdmaev_message* msg) {
  if (!msg) return nullptr;
  if (const auto* r = box(msg)->m.reply(); r && r->op) return c_str(rdma_eventd::op_name(*r->op));
  if (const auto* e = box(msg)->m.error(); e && !e->op.empty()) return e->op.c_str();
  return nullptr;
}

const char* rdmaev_message_error(const rdmaev_message* msg) {
  const rdma_eventd::RequestError* e = msg ? box(msg)->m.error() : nullptr;
  return e ? c_str(rdma_eventd::error_code_name(e->code)) : nullptr;
}

const char* rdmaev_message_error_text(const rdmaev_message* msg) {
  const rdma_eventd::RequestError* e = msg ? box(msg)->m.error() : nullptr;
  return e ? e->message.c_str() : nullptr;
}

}  // extern "C"
