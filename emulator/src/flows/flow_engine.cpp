#include "contend/emulator/flows/flow_engine.h"

#include <algorithm>
#include <optional>

#include "contend/emulator/flows/flow_pacer.h"
#include "flows/flow.h"

namespace contend::emulator {

namespace {

// The addresses of `from`'s and `to`'s NICs on a fabric (links that join a switch, which hold no
// background address): from's first, and to's on the same switch when it has one there (the same
// rail), else its first. nullopt when either has none.
std::optional<std::pair<std::string, std::string>> fabric_endpoints(const TopologyPlan& plan, const std::string& from,
                                                                    const std::string& to) {
  std::vector<std::pair<const InterfacePlan*, const InterfacePlan*>> nics_from, nics_to;  // (host end, switch end)
  for (const LinkPlan& l : plan.links) {
    for (const auto& [end, other] : {std::pair{&l.from, &l.to}, std::pair{&l.to, &l.from}}) {
      if (end->background_address.empty() && (end->node == from || end->node == to)) {
        (end->node == from ? nics_from : nics_to).push_back({end, other});
      }
    }
  }
  if (nics_from.empty() || nics_to.empty()) {
    return std::nullopt;
  }
  const auto same_switch = std::find_if(nics_to.begin(), nics_to.end(), [&](const auto& nic) {
    return nic.second->node == nics_from.front().second->node;
  });
  const InterfacePlan* dst = (same_switch != nics_to.end() ? *same_switch : nics_to.front()).first;
  return std::pair{strip_prefix_length(nics_from.front().first->address), strip_prefix_length(dst->address)};
}

}  // namespace

Result<FlowEndpoints> flow_endpoints(const TopologyPlan& plan, const FlowSpec& flow) {
  std::string src_ns, dst_ns;  // "": the engine's own namespace
  bool src = false, dst = false;
  for (const auto& [node, ns] : plan.nodes) {
    if (node == flow.from) {
      src_ns = ns;
      src = true;
    }
    if (node == flow.to) {
      dst_ns = ns;
      dst = true;
    }
  }
  if (!src || !dst) {
    return make_error(Errc::kNotFound, "flow " + flow.name + ": unknown node " + (src ? flow.to : flow.from));
  }
  for (const auto& l : plan.links) {
    if (l.from.node == flow.from && l.to.node == flow.to) {
      return FlowEndpoints{src_ns, dst_ns, strip_prefix_length(l.from.background_address),
                           strip_prefix_length(l.to.background_address), l.link};
    }
    if (l.to.node == flow.from && l.from.node == flow.to) {
      return FlowEndpoints{src_ns, dst_ns, strip_prefix_length(l.to.background_address),
                           strip_prefix_length(l.from.background_address), l.link};
    }
  }
  if (auto fabric = fabric_endpoints(plan, flow.from, flow.to)) {
    return FlowEndpoints{src_ns, dst_ns, fabric->first, fabric->second, "fabric"};
  }
  std::string src_addr, dst_addr;
  for (const auto& p : plan.switch_ports) {
    if (p.node == flow.from) {
      src_addr = strip_prefix_length(p.address);
    }
    if (p.node == flow.to) {
      dst_addr = strip_prefix_length(p.address);
    }
  }
  return FlowEndpoints{src_ns, dst_ns, src_addr, dst_addr, "switch"};
}

FlowEngine::FlowEngine(TopologyPlan plan) : plan_(std::move(plan)) {}

FlowEngine::~FlowEngine() {
  stop_all();
}

Result<std::unique_ptr<FlowEngine>> FlowEngine::for_host(const Scenario& scenario, HostFlowPlan plan) {
  std::unique_ptr<FlowEngine> engine(new FlowEngine());
  std::map<std::string, const FlowSpec*> flows;  // by name: the first start of each
  for (const Event& e : scenario.events) {
    if (const auto* start = std::get_if<FlowStart>(&e.action)) {
      flows.try_emplace(start->flow.name, &start->flow);
    }
  }
  for (const auto& [name, spec] : flows) {
    engine->host_flow_names_.push_back(name);
    if (spec->iterate_bytes > 0) {
      return make_error(Errc::kInvalidArgument,
                        "flow " + name +
                            ": closed-loop traffic (\"iterate\") runs between namespaces on one "
                            "machine: each iteration waits on every flow's sink, here on other hosts");
    }
    if (spec->from == plan.node && plan.addresses.count(spec->to) == 0) {
      return make_error(Errc::kInvalidArgument, "flow " + name + ": no address for node \"" + spec->to +
                                                    "\" (give --peer " + spec->to + "=ADDRESS)");
    }
  }
  engine->host_ = std::move(plan);
  const HostFlowPlan& host = *engine->host_;
  for (const auto& [name, spec] : flows) {
    if (spec->to != host.node || spec->from == host.node) {
      continue;
    }
    FlowEndpoints ends{"", host.netns, "", host.address, "host " + spec->from + "->" + spec->to};
    if (auto ok = engine->start_flow(*spec, ends, engine->host_port(name), true, false); !ok) {
      return ok.error();
    }
  }
  return engine;
}

int FlowEngine::host_port(const std::string& flow) const {
  const auto it = std::lower_bound(host_flow_names_.begin(), host_flow_names_.end(), flow);
  return host_->base_port + static_cast<int>(it - host_flow_names_.begin());
}

bool FlowEngine::source_here(const FlowSpec& flow) const {
  return !host_ || flow.from == host_->node;
}

Result<void> FlowEngine::start(const FlowSpec& spec) {
  if (!host_) {
    auto ends = flow_endpoints(plan_, spec);
    if (!ends) {
      return ends.error();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    return start_flow(spec, *ends, next_port_++, true, true);
  }
  if (!source_here(spec)) {
    return {};  // the host it leaves starts it; this host's sink (if it reaches here) listens
  }
  const auto to = host_->addresses.find(spec.to);
  if (to == host_->addresses.end() ||
      !std::binary_search(host_flow_names_.begin(), host_flow_names_.end(), spec.name)) {
    return make_error(Errc::kInvalidArgument, "flow " + spec.name + ": not a flow of this host's scenario");
  }
  FlowEndpoints ends{host_->netns, "", host_->address, to->second, "host " + spec.from + "->" + spec.to};
  std::lock_guard<std::mutex> lock(mutex_);
  return start_flow(spec, ends, host_port(spec.name), false, true);  // its sink is the other host's
}

// Starts the sink and/or the source of one flow; the caller holds mutex_ (or owns the engine alone).
Result<void> FlowEngine::start_flow(const FlowSpec& spec, FlowEndpoints ends, int port, bool sink, bool source) {
  for (const auto& f : flows_) {
    if (f->spec.name == spec.name && f->running) {
      return make_error(Errc::kInvalidArgument, "flow " + spec.name + " is running already");
    }
  }
  auto flow = std::make_unique<Flow>();
  flow->spec = spec;
  flow->ends = std::move(ends);
  flow->port = port;
  flow->connect_timeout_s = host_ ? host_->connect_timeout_s : 0;
  Flow* f = flow.get();
  if (spec.iterate_bytes > 0) {
    auto& job = jobs_[spec.job];
    if (!job) {
      job = std::make_shared<JobIterations>(spec.job_flows, spec.iterate_bytes);
    }
    f->job = job;
    f->job_slot = job->join(spec.name, flow_clock_s());
  }
  if (sink) {
    if (auto ok = f->launch(f->sink, &Flow::run_sink); !ok) {
      return ok;
    }
  }
  if (source) {
    if (auto ok = f->launch(f->source, &Flow::run_source); !ok) {
      return ok;
    }
    f->running = true;
    f->started_s = flow_clock_s();
  }
  flows_.push_back(std::move(flow));
  return {};
}

Result<void> FlowEngine::stop(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& f : flows_) {
    if (f->spec.name == name && f->running) {
      f->stopped_s = f->join();
      f->running = false;
      return {};
    }
  }
  return make_error(Errc::kNotFound, "no running flow " + name);
}

void FlowEngine::stop_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& f : flows_) {
    if (f->running) {
      f->stopped_s = f->join();
      f->running = false;
    } else if (f->sink.joinable()) {
      (void)f->join();  // a hosts-mode sink: listening since the start
    }
  }
}

std::vector<FlowStats> FlowEngine::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, FlowStats> by_name;
  const double now = flow_clock_s();
  for (const auto& f : flows_) {
    auto [it, fresh] = by_name.try_emplace(f->spec.name);
    FlowStats& s = it->second;
    if (fresh) {
      s.name = f->spec.name;
      s.protocol = f->spec.protocol;
      s.streams = f->spec.streams;
      s.target_bps = f->spec.rate_bps;
      s.via = f->ends.via;
    }
    s.running = s.running || f->running;
    s.bytes_received += f->received.load();
    s.bytes_sent += f->sent.load();
    s.active_s += (f->running ? now : f->stopped_s) - f->started_s;
    std::lock_guard<std::mutex> e(f->error_mutex);
    if (!f->error.empty()) {
      s.error = f->error;
    }
    if (!f->send_path.empty()) {
      s.send_path = f->send_path;
    }
    if (f->job) {
      s.closed_loop = true;
      s.iterations = f->job->iterations();
      s.iteration_s = f->job->median_iteration_s();
    }
  }
  std::vector<FlowStats> out;
  for (auto& [name, s] : by_name) {
    if (s.bytes_sent > 0) {  // a host that only sinks the flow cannot tell
      s.ceiling_bps = source_ceiling_bps(s.target_bps, s.bytes_sent, s.active_s);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace contend::emulator
