// rdma-eventctl inventory: the adapters this host has had in service, by node GUID, present or
// missing (docs/health.md, "The inventory"); and `inventory retire`, an operator's word that an
// adapter is out of service for good.
#include <cstdio>
#include <string>
#include <string_view>

#include "commands.h"
#include "rdma_eventd/record.h"
#include "schema/inventory_reply.h"
#include "schema/record_text.h"

namespace rdma_eventctl {

using namespace rdma_eventd;

const char* const kInventoryHelp = R"(Usage: rdma-eventctl inventory [OPTIONS]
       rdma-eventctl inventory retire DEV|GUID [OPTIONS]

Prints the host's inventory as rdma-eventd keeps it across boots (docs/health.md, "The
inventory"): every adapter that has had a port up in service, by node GUID, with the name
and the rate it last had, present or missing since when. An adapter of the inventory that
is absent is missing: its ports count as gone (device_missing) in health, metrics and the
records until it is back or retired.

retire DEV|GUID takes an adapter out of the inventory (root only): a node GUID, or the name
the adapter last had. Its ports, if gone, are forgotten, and the host is judged without it.
The daemon logs who retired what to the journal. An adapter still present joins again when
a port of it next comes up in service.

Options:
      --json           print the daemon's reply as it is (one JSON object)
      --socket PATH    the daemon's socket
  -h, --help           this text

Exit status: 0 done, 64 bad command line, 69 the daemon cannot be reached, 76 the daemon
refused the request (retire: not root, or no such adapter; nothing changed).
)";

namespace {

std::string inventory_ports_text(const InventoryReply::Adapter& a) {
  std::string out;
  for (const InventoryReply::Port& p : a.ports) {
    out += (out.empty() ? "" : ", ") + std::to_string(p.port);
    const auto speed = link_speed_from_name(p.speed);
    if (p.width != 0 && speed && *speed != LinkSpeed::kUnknown) {
      out += " (" + std::to_string(p.width) + "x " + std::string(link_speed_display(*speed)) + ")";
    }
  }
  return (a.ports.size() == 1 ? "port " : "ports ") + out;
}

// "mlx5_1  0c42:a103:00b2:1f31  missing since 2026-12-06T07:00:00Z  port 1 (4x HDR)  last seen
// 2026-12-05T22:10:00Z"
std::string inventory_line(const InventoryReply::Adapter& a) {
  std::string line = a.name + "  " + a.node_guid + "  ";
  line += a.state == "missing" ? "missing since " + format_rfc3339_us(a.missing_since_us) : a.state;
  line += "  " + inventory_ports_text(a) + "  joined " + format_rfc3339_us(a.joined_us);
  if (a.state == "missing") line += "  last seen " + format_rfc3339_us(a.last_seen_us);
  return line;
}

int inventory_call(const Global& global, const Request& request, Message& reply) {
  auto client = connect_or_report(global, kRequestTimeout);
  if (!client) return kExitUnavailable;
  const ClientStatus s = client->call(request, kRequestTimeout, reply);
  if (s != ClientStatus::kOk) return report_failure(global, s, *client);
  return kExitOk;
}

int show_inventory(const Global& global, bool json) {
  Message reply;
  if (const int rc = inventory_call(global, Request{Op::kInventory}, reply); rc != kExitOk)
    return rc;
  std::string why;
  const auto inventory = inventory_reply_from_json(reply.text(), &why);
  if (!inventory) {
    std::fprintf(stderr, "%s: unreadable inventory reply: %s\n", global.program.c_str(),
                 why.c_str());
    return kExitProtocol;
  }
  if (json) {
    std::puts(reply.text().c_str());
    return kExitOk;
  }
  if (!inventory->enabled) {
    std::puts("no inventory: port health is off in rdma-eventd (health.enabled)");
    return kExitOk;
  }
  size_t missing = 0;
  for (const auto& a : inventory->adapters)
    missing += a.state == "missing";
  std::printf("%zu adapter%s in the inventory, %zu missing\n", inventory->adapters.size(),
              inventory->adapters.size() == 1 ? "" : "s", missing);
  for (const auto& a : inventory->adapters)
    std::puts(inventory_line(a).c_str());
  return kExitOk;
}

int retire_adapter(const Global& global, std::string_view what, bool json) {
  Request request{Op::kRetire};
  request.adapter = std::string(what);
  Message reply;
  if (const int rc = inventory_call(global, request, reply); rc != kExitOk) return rc;
  std::string why;
  const auto retired = retired_from_json(reply.text(), &why);
  if (!retired) {
    std::fprintf(stderr, "%s: unreadable retire reply: %s\n", global.program.c_str(), why.c_str());
    return kExitProtocol;
  }
  if (json) {
    std::puts(reply.text().c_str());
  } else {
    std::printf("retired: %s\n", inventory_line(*retired).c_str());
  }
  return kExitOk;
}

}  // namespace

int run_inventory(const Global& g, int argc, char** argv) {
  Global global = g;
  bool json = false;
  const auto args =
      parse_command_line(argc, argv, kInventoryHelp, global, {flag_option("json", json)});
  if (!args) return kExitOk;
  if (args->empty()) return show_inventory(global, json);
  if (std::string_view((*args)[0]) != "retire") {
    throw UsageError{"unknown inventory command '" + std::string((*args)[0]) +
                     "' (retire DEV|GUID, or nothing to print the inventory)"};
  }
  if (args->size() != 2) throw UsageError{"inventory retire takes one DEV or node GUID"};
  return retire_adapter(global, (*args)[1], json);
}

}  // namespace rdma_eventctl
