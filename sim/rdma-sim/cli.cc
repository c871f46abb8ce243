#include "cli.h"

#include <cstdio>
#include <cstring>
#include <functional>

namespace rdmasim::cli {

using nlohmann::json;

namespace {

using Handler = std::function<int(const Global&, const Args&)>;

struct Spec {
  std::string name;
  size_t min_pos;
  size_t max_pos;
  std::vector<std::string> value_options;
  std::vector<std::string> flag_options;
  Handler run;
};

uint64_t number(const std::string& text, const std::string& what, uint64_t max) {
  // Decimal, or hex with 0x (P_Keys, GUID-like values). No octal surprises: "010" is ten.
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::string digits = hex ? text.substr(2) : text;
  if (digits.empty() || digits.size() > 20 ||
      digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") != std::string::npos)
    throw UsageError(what + " \"" + text + "\" is not a number");
  const unsigned long long v = std::strtoull(digits.c_str(), nullptr, hex ? 16 : 10);
  if (v > max)
    throw UsageError(what + " " + text + " is out of range (0.." + std::to_string(max) + ")");
  return v;
}

std::optional<std::string> option(const Args& a, const std::string& name) {
  auto it = a.options.find(name);
  if (it == a.options.end()) return std::nullopt;
  return it->second;
}

// Sends a request and prints the reply: the message, or the JSON with --json.
int send(const Global& g, json req, const std::function<void(const json&)>& human = nullptr) {
  const json reply = request(resolve_dir(g), req);
  const bool ok = reply.value("ok", false);
  if (g.json) std::printf("%s\n", reply.dump().c_str());
  if (!ok) {
    std::fprintf(stderr, "rdma-sim: %s\n", reply.value("error", std::string("failed")).c_str());
    return kExitFailed;
  }
  if (!g.json) {
    if (human)
      human(reply);
    else
      std::printf("%s\n", reply.value("message", std::string("ok")).c_str());
  }
  return kExitOk;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t pos = text.find(sep, start);
    out.push_back(text.substr(start, pos - start));
    if (pos == std::string::npos) return out;
    start = pos + 1;
  }
}

json event_type(const std::string& text) {
  static const char* const kNames[] = {"port_active", "port_err",    "lid_change",
                                       "pkey_change", "sm_change",   "client_reregister",
                                       "gid_change",  "device_fatal"};
  static const uint32_t kTypes[] = {9, 10, 11, 12, 13, 17, 18, 8};
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (text == kNames[i]) return kTypes[i];
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos)
    return number(text, "event type", UINT32_MAX);
  throw UsageError("event type \"" + text +
                   "\" is not a number or one of: port_active, port_err, lid_change, pkey_change, "
                   "sm_change, client_reregister, gid_change, device_fatal");
}

const std::vector<Spec>& specs() {
  static const std::vector<Spec> kSpecs = {
      {"start",
       0,
       0,
       {"--topology", "--query-latency-us"},
       {"--no-rdma", "--foreground"},
       cmd_start},
      {"stop", 0, 0, {}, {}, cmd_stop},
      {"run", 0, 0, {}, {}, cmd_run},
      {"env", 0, 0, {}, {}, cmd_env},
      {"show",
       0,
       1,
       {},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "show"}};
         if (!a.positional.empty()) req["device"] = a.positional[0];
         return send(g, req, print_show);
       }},
      {"stats",
       0,
       0,
       {},
       {},
       [](const Global& g, const Args&) {
         return send(g, {{"cmd", "stats"}}, print_stats);
       }},
      {"port down",
       1,
       1,
       {"--phys"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "port_down"}, {"port", a.positional[0]}};
         if (auto phys = option(a, "--phys")) {
           if (*phys != "polling" && *phys != "disabled" && *phys != "sleep")
             throw UsageError("--phys \"" + *phys + "\" is not one of: polling, disabled, sleep");
           req["phys"] = *phys;
         }
         return send(g, req);
       }},
      {"port up",
       1,
       1,
       {"--lid", "--sm-lid"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "port_up"}, {"port", a.positional[0]}};
         if (auto v = option(a, "--lid")) req["lid"] = number(*v, "LID", 0xffff);
         if (auto v = option(a, "--sm-lid")) req["sm_lid"] = number(*v, "SM LID", 0xffff);
         return send(g, req);
       }},
      {"lid",
       2,
       2,
       {},
       {},
       [](const Global& g, const Args& a) {
         return send(g, {{"cmd", "lid"},
                         {"port", a.positional[0]},
                         {"lid", number(a.positional[1], "LID", 0xffff)}});
       }},
      {"sm",
       2,
       2,
       {"--sl"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "sm"},
                     {"port", a.positional[0]},
                     {"sm_lid", number(a.positional[1], "SM LID", 0xffff)}};
         if (auto v = option(a, "--sl")) req["sl"] = number(*v, "SM SL", 15);
         return send(g, req);
       }},
      {"reregister",
       1,
       1,
       {},
       {},
       [](const Global& g, const Args& a) {
         return send(g, {{"cmd", "reregister"}, {"port", a.positional[0]}});
       }},
      {"pkey",
       3,
       3,
       {},
       {},
       [](const Global& g, const Args& a) {
         return send(g, {{"cmd", "pkey"},
                         {"port", a.positional[0]},
                         {"index", number(a.positional[1], "P_Key index", 0xffff)},
                         {"value", number(a.positional[2], "P_Key", 0xffff)}});
       }},
      {"gid add",
       2,
       2,
       {"--index", "--type", "--netdev"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "gid_add"}, {"port", a.positional[0]}, {"gid", a.positional[1]}};
         if (auto v = option(a, "--index")) req["index"] = number(*v, "GID index", 0xffff);
         if (auto v = option(a, "--type")) {
           if (*v != "ib" && *v != "roce-v1" && *v != "roce-v2")
             throw UsageError("--type \"" + *v + "\" is not one of: ib, roce-v1, roce-v2");
           req["type"] = *v;
         }
         if (auto v = option(a, "--netdev")) req["netdev"] = *v;
         return send(g, req);
       }},
      {"gid del",
       2,
       2,
       {},
       {},
       [](const Global& g, const Args& a) {
         return send(g, {{"cmd", "gid_del"},
                         {"port", a.positional[0]},
                         {"index", number(a.positional[1], "GID index", 0xffff)}});
       }},
      {"gid add-ip",
       2,
       2,
       {"--netdev"},
       {},
       [](const Global& g, const Args& a) {
         auto netdev = option(a, "--netdev");
         if (!netdev || netdev->empty()) throw UsageError("gid add-ip needs --netdev NAME");
         return send(g, {{"cmd", "gid_add_ip"},
                         {"port", a.positional[0]},
                         {"ip", a.positional[1]},
                         {"netdev", *netdev}});
       }},
      {"gid del-ip",
       2,
       2,
       {},
       {},
       [](const Global& g, const Args& a) {
         return send(g,
                     {{"cmd", "gid_del_ip"}, {"port", a.positional[0]}, {"ip", a.positional[1]}});
       }},
      {"fatal",
       1,
       1,
       {"--port"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "fatal"}, {"device", a.positional[0]}};
         if (auto v = option(a, "--port")) req["element"] = number(*v, "--port", UINT32_MAX);
         return send(g, req);
       }},
      {"unplug",
       1,
       1,
       {"--wait"},
       {"--no-disassociate"},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "unplug"},
                     {"device", a.positional[0]},
                     {"disassociate", !a.options.count("--no-disassociate")}};
         if (auto v = option(a, "--wait")) {
           char* end = nullptr;
           const double s = std::strtod(v->c_str(), &end);
           if (v->empty() || *end || !(s >= 0) || s > 86400)
             throw UsageError("--wait \"" + *v + "\" is not a number of seconds");
           req["wait"] = s;
         }
         return send(g, req);
       }},
      {"replug",
       1,
       1,
       {},
       {},
       [](const Global& g, const Args& a) {
         return send(g, {{"cmd", "replug"}, {"device", a.positional[0]}});
       }},
      {"rename",
       2,
       2,
       {},
       {},
       [](const Global& g, const Args& a) {
         return send(
             g, {{"cmd", "rename"}, {"device", a.positional[0]}, {"new_name", a.positional[1]}});
       }},
      {"event",
       2,
       2,
       {"--element", "--context"},
       {},
       [](const Global& g, const Args& a) {
         json req = {
             {"cmd", "event"}, {"target", a.positional[0]}, {"type", event_type(a.positional[1])}};
         if (auto v = option(a, "--element")) req["element"] = number(*v, "--element", UINT64_MAX);
         if (auto v = option(a, "--context")) req["context"] = number(*v, "--context", UINT64_MAX);
         return send(g, req);
       }},
      {"storm",
       0,
       0,
       {"--count", "--targets", "--types"},
       {},
       [](const Global& g, const Args& a) {
         auto count = option(a, "--count");
         if (!count) throw UsageError("storm needs --count N");
         json req = {{"cmd", "storm"}, {"count", number(*count, "--count", 10000000)}};
         if (auto v = option(a, "--targets"); v && *v != "all") req["targets"] = split(*v, ',');
         if (auto v = option(a, "--types")) {
           json types = json::array();
           for (const std::string& t : split(*v, ','))
             types.push_back(event_type(t));
           req["types"] = types;
         }
         return send(g, req);
       }},
      {"no-rdma",
       1,
       1,
       {},
       {},
       [](const Global& g, const Args& a) {
         const std::string& v = a.positional[0];
         if (v != "on" && v != "off")
           throw UsageError("no-rdma takes on or off, not \"" + v + "\"");
         return send(g, {{"cmd", "no_rdma"}, {"on", v == "on"}});
       }},
      {"set",
       2,
       2,
       {},
       {},
       [](const Global& g, const Args& a) {
         if (a.positional[0] != "query-latency-us")
           throw UsageError("set knows one setting, query-latency-us, not \"" + a.positional[0] +
                            "\"");
         return send(g,
                     {{"cmd", "set"},
                      {"query_latency_us", number(a.positional[1], "query-latency-us", 10000000)}});
       }},
  };
  return kSpecs;
}

const Spec* find_spec(const std::string& name) {
  for (const Spec& s : specs())
    if (s.name == name) return &s;
  return nullptr;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const std::string& x : v)
    if (x == s) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  Global g;
  std::vector<std::string> words;
  std::vector<std::string> trailing;
  bool help = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      trailing.assign(argv + i + 1, argv + argc);
      break;
    }
    if (arg == "--json") {
      g.json = true;
    } else if (arg == "--dir" || arg.rfind("--dir=", 0) == 0) {
      if (arg == "--dir" && i + 1 >= argc) {
        std::fprintf(stderr, "rdma-sim: --dir needs a directory\n");
        return kExitUsage;
      }
      g.dir = arg == "--dir" ? std::string(argv[++i]) : arg.substr(6);
    } else if (arg == "-h" || arg == "--help") {
      help = true;
    } else {
      words.push_back(arg);
    }
  }
  if (words.empty() || words[0] == "help") {
    if (words.size() > 1) {
      std::string name = words[1];
      if (words.size() > 2 && (name == "port" || name == "gid")) name += " " + words[2];
      if (!print_command_help(name, stdout)) {
        std::fprintf(stderr, "rdma-sim: no command \"%s\"\n", name.c_str());
        return kExitUsage;
      }
      return kExitOk;
    }
    print_usage(help || !words.empty() ? stdout : stderr);
    return help || !words.empty() ? kExitOk : kExitUsage;
  }

  Args a;
  size_t next = 1;
  a.command = words[0];
  if ((a.command == "port" || a.command == "gid") && words.size() > 1)
    a.command += " " + words[next++];
  const Spec* spec = find_spec(a.command);
  if (help) {
    if (!print_command_help(spec ? a.command : words[0], stdout)) print_usage(stdout);
    return kExitOk;
  }
  if (!spec) {
    std::fprintf(stderr, "rdma-sim: unknown command \"%s\" (see rdma-sim --help)\n",
                 a.command.c_str());
    return kExitUsage;
  }
  try {
    for (size_t i = next; i < words.size(); ++i) {
      std::string w = words[i];
      if (w == "-t") w = "--topology";
      if (w.size() > 2 && w.rfind("--", 0) == 0) {
        std::string value;
        const size_t eq = w.find('=');
        if (eq != std::string::npos) value = w.substr(eq + 1), w = w.substr(0, eq);
        if (contains(spec->flag_options, w) && eq == std::string::npos) {
          a.options[w] = "";
        } else if (contains(spec->value_options, w)) {
          if (eq == std::string::npos) {
            if (i + 1 >= words.size()) throw UsageError(w + " needs a value");
            value = words[++i];
          }
          a.options[w] = value;
        } else {
          throw UsageError("unknown option " + w + " for " + a.command);
        }
      } else {
        a.positional.push_back(w);
      }
    }
    a.trailing = trailing;
    if (a.positional.size() < spec->min_pos || a.positional.size() > spec->max_pos)
      throw UsageError("wrong number of arguments");
    if (!trailing.empty() && a.command != "run") throw UsageError("unexpected \"--\"");
    return spec->run(g, a);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "rdma-sim: %s: %s (usage: %s)\n", a.command.c_str(), e.what(),
                 command_usage(a.command).c_str());
    return kExitUsage;
  } catch (const NoSimulator& e) {
    if (g.json) std::printf("%s\n", json({{"ok", false}, {"error", e.what()}}).dump().c_str());
    std::fprintf(stderr, "rdma-sim: %s\n", e.what());
    return kExitNoSimulator;
  } catch (const std::exception& e) {
    if (g.json) std::printf("%s\n", json({{"ok", false}, {"error", e.what()}}).dump().c_str());
    std::fprintf(stderr, "rdma-sim: %s\n", e.what());
    return kExitFailed;
  }
}

}  // namespace rdmasim::cli
