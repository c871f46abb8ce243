// How control replies report the EQEs a command raised (control.cc, control_devx.cc): a
// "devx_events" array in the JSON, and a clause of the message when a channel got one.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fabric.h"

namespace rdmasim {

// The verbs events a command queued: the "events" array of every reply.
nlohmann::json events_json(const std::vector<Delivery>& deliveries);
nlohmann::json devx_events_json(const std::vector<DevxDelivery>& deliveries);
// "port_module_event to 2 channels (1 queued, 1 merged)"
std::string devx_text(const DevxDelivery& d);

}  // namespace rdmasim
