#include "job/job_cell.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "contend/common/units.h"
#include "contend/emulator/flows/flow_engine.h"
#include "contend/emulator/net/netns.h"
#include "job/job_log.h"
#include "real/namespace_cell.h"

namespace contend::runner {
namespace {

std::string this_hostname() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

// Every rank's place in the network that is up.
Result<std::vector<RankPlace>> rank_places(const emulator::Scenario& s, const emulator::TopologyPlan& plan,
                                           const std::string& out) {
  auto ends = rank_ends(s, plan);
  if (!ends) {
    return ends.error();
  }
  std::vector<RankPlace> places;
  RankPlace common;
  common.world = static_cast<int>(s.rank_hosts());
  common.nodes.assign(s.nodes.begin(), s.nodes.begin() + common.world);
  common.out = out;
  for (const RankEnd& end : *ends) {
    common.addresses.push_back(end.address);
  }
  for (int r = 0; r < common.world; ++r) {
    RankPlace p = common;
    p.rank = r;
    p.node = s.nodes[r];
    p.address = (*ends)[r].address;
    p.ifname = (*ends)[r].ifname;
    places.push_back(std::move(p));
  }
  return places;
}

// Each node namespace's hosts file (removed with the namespace).
Result<void> write_hosts_files(const emulator::TopologyPlan& plan, const std::vector<RankPlace>& places) {
  const std::string hostname = this_hostname();
  for (std::size_t r = 0; r < places.size(); ++r) {
    const std::string& netns = plan.nodes[r].second;
    if (auto ok = emulator::write_netns_hosts(
            netns, job_hosts_file(hostname, places[r].node, places[r].nodes, places[r].addresses));
        !ok) {
      return ok;
    }
  }
  return {};
}

// The folder rank `place` starts in: the job's workdir, or, when that is a template, its folder
// for this rank and cell, made now (a results path each cell has afresh: nothing an earlier
// repetition left there).
Result<std::string> fresh_workdir(const CommandJob& job, const RankPlace& place) {
  auto workdir = rank_workdir(job, place);
  if (!workdir || !workdir_is_template(job)) {
    return workdir;
  }
  std::error_code ec;
  std::filesystem::create_directories(*workdir, ec);
  if (ec) {
    return make_error(Errc::kIo, *workdir + ": cannot make the rank's working folder: " + ec.message());
  }
  return workdir;
}

// Whether a background flow of `s` crosses the control bridge (between nodes no link joins).
bool flows_cross_bridge(const emulator::Scenario& s, const emulator::TopologyPlan& plan) {
  for (const emulator::Event& e : s.events) {
    if (const auto* start = std::get_if<emulator::FlowStart>(&e.action)) {
      if (auto ends = emulator::flow_endpoints(plan, start->flow); ends && ends->via == "switch") {
        return true;
      }
    }
  }
  return false;
}

// One rank's guard: `ip netns exec NS contend job-rank --log L --cwd D -- COMMAND`, with its
// environment; what it runs is written to the cell's log first.
Result<ChildProcess> start_rank(const CommandJob& job, const JobVariant& variant, const RankPlace& place,
                                const std::string& netns, const std::string& rank_log, const LaunchOptions& o,
                                std::ofstream& cell_log) {
  auto command = rank_command(job, variant, place);
  if (!command) {
    return with_context(command.error(), "rank " + std::to_string(place.rank) + ": /workload/command");
  }
  auto env = rank_environment(job, variant, place);
  if (!env) {
    return with_context(env.error(), "rank " + std::to_string(place.rank) + ": /workload/env");
  }
  auto workdir = fresh_workdir(job, place);
  if (!workdir) {
    return with_context(workdir.error(), "rank " + std::to_string(place.rank) + ": /workload/workdir");
  }
  cell_log << "rank " << place.rank << " on " << place.node << " (" << netns << "), in " << *workdir << ", log "
           << rank_log << "\n  environment:";
  for (const std::string& e : *env) {
    cell_log << ' ' << e;
  }
  cell_log << "\n  command:";
  for (const std::string& a : *command) {
    cell_log << " '" << a << "'";
  }
  cell_log << '\n' << std::flush;
  std::vector<std::string> argv = {"ip",    "netns",  "exec",  netns,    o.contend, "job-rank",
                                   "--log", rank_log, "--cwd", *workdir, "--"};
  argv.insert(argv.end(), command->begin(), command->end());
  ChildOptions co;
  co.output_path = rank_log;  // the guard's own complaints, if any, beside the rank's lines
  co.environment = std::move(*env);
  co.grace = std::chrono::milliseconds(3000);  // the guard's 1.5 s for the rank's tree, and its exit
  co.own_group = true;                         // what the job signals stays in its cell
  return ChildProcess::spawn(argv, co);
}

// Every rank started, in rank order; stops at the first that cannot be.
Result<std::vector<ChildProcess>> start_ranks(const Experiment& e, const Cell& cell, const CellFiles& files,
                                              const LaunchOptions& o, const emulator::TopologyPlan& plan,
                                              const std::vector<RankPlace>& places) {
  std::ofstream cell_log(files.log, std::ios::app);
  std::vector<ChildProcess> ranks;
  for (const RankPlace& place : places) {
    if (e.job->launch_rank0_only && place.rank != 0) {
      break;
    }
    const std::string rank_log = rank_log_path(files.log, place.rank);
    auto guard =
        start_rank(*e.job, e.job->variants[cell.variant], place, plan.nodes[place.rank].second, rank_log, o, cell_log);
    if (!guard) {
      end_all(ranks);
      return guard.error();
    }
    ranks.push_back(std::move(*guard));
  }
  return ranks;
}

}  // namespace

std::string job_hosts_file(const std::string& hostname, const std::string& node, const std::vector<std::string>& nodes,
                           const std::vector<std::string>& addresses) {
  std::string out =
      "# contend: this node's hosts file (removed with its namespace)\n127.0.0.1\tlocalhost\n"
      "::1\tlocalhost ip6-localhost ip6-loopback\n";
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    out += addresses[i] + "\t" + nodes[i];
    if (nodes[i] == node && !hostname.empty() && hostname != node) {
      out += " " + hostname;
    }
    out += "\n";
  }
  return out;
}

std::vector<std::string> unlinked_rank_pairs(const emulator::Scenario& s) {
  std::vector<std::string> out;
  if (s.has_fabric()) {
    return out;  // the fabric routes every host to every other
  }
  for (std::size_t a = 0; a < s.nodes.size(); ++a) {
    for (std::size_t b = a + 1; b < s.nodes.size(); ++b) {
      const bool linked = std::any_of(s.links.begin(), s.links.end(), [&](const emulator::LinkSpec& l) {
        return (l.from == s.nodes[a] && l.to == s.nodes[b]) || (l.from == s.nodes[b] && l.to == s.nodes[a]);
      });
      if (!linked) {
        out.push_back(s.nodes[a] + " and " + s.nodes[b]);
      }
    }
  }
  return out;
}

Result<void> check_links_carried(const CommandJob& job, const emulator::Scenario& s,
                                 const std::vector<PortBytes>& ports) {
  const std::size_t ranks = job.ranks > 0 ? static_cast<std::size_t>(job.ranks) : s.rank_hosts();
  if (ranks < 2 || job.min_link_bytes_per_step == 0) {
    return {};
  }
  const std::optional<std::uint64_t> sent = hosts_sent(ports, s);
  if (!sent) {
    std::fprintf(stderr,
                 "contend run: background flows share the ranks' ports, whose counters do not tell their bytes "
                 "from the job's: whether the job's data crossed the links is not checked\n");
    return {};
  }
  const auto steps = static_cast<std::uint64_t>(job.warmup + job.steps);
  if (*sent >= job.min_link_bytes_per_step * steps) {
    return {};
  }
  return make_error(Errc::kInvalidArgument,
                    "the job's ranks sent " + format_size(*sent) + " over the scenario's links for at least " +
                        std::to_string(steps) + " steps, less than " + format_size(job.min_link_bytes_per_step) +
                        " a step (/workload/min_link_bytes_per_step): its data went around the shaped links (shared "
                        "memory, a Unix socket or a file between the ranks: NCCL's P2P and SHM, Open MPI's vader/sm; "
                        "cross-memory attach, TensorPipe's cma, where a rank log says its guard left it open) and "
                        "its throughput is not one "
                        "the scenario made; docs/own-job.md#paths-around-the-links names the setting that closes "
                        "each. Or the job exchanges that little: then min_link_bytes_per_step says what it "
                        "does (0 for a job that does not use the network)");
}

namespace {

// A user's job: one guard per rank in its node's namespace, running the rank's command.
class CommandCell : public NamespaceCell {
 public:
  CommandCell(const Experiment& e, const Cell& cell, const CellFiles& files, const LaunchOptions& o)
      : e_(e), cell_(cell), files_(files), o_(o) {}

  Result<void> prepare(const emulator::TopologyPlan& plan) override {
    const std::string out = job_out_dir(files_.log);
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    auto places = rank_places(e_.scenarios[cell_.scenario], plan, std::filesystem::absolute(out).string());
    if (!places) {
      return places.error();
    }
    places_ = std::move(*places);
    if (auto ok = write_hosts_files(plan, places_); !ok) {
      return ok;
    }
    auto bridge = emulator::control_bridge_bytes(plan);
    if (!bridge) {
      return bridge.error();
    }
    bridge_before_ = *bridge;
    return {};
  }

  Result<std::vector<ChildProcess>> start(const emulator::TopologyPlan& plan, double /*zero_s*/) override {
    auto ranks = start_ranks(e_, cell_, files_, o_, plan, places_);
    ranks_ = ranks ? static_cast<int>(ranks->size()) : 0;
    return ranks;
  }

  CellProcesses names() const override {
    const std::string log = files_.log;
    const int ranks = ranks_;
    return {"rank", [log](std::size_t r) { return rank_log_path(log, static_cast<int>(r)); },
            [log, ranks]() -> std::optional<std::pair<std::size_t, int>> {
              if (auto first = first_failure(log, ranks)) {
                return std::pair<std::size_t, int>(first->rank, first->failure.code);
              }
              return std::nullopt;
            }};
  }

  std::chrono::seconds timeout() const override { return e_.job->timeout; }

  // The ranks' data crossed the shaped links, not the control bridge (unless a background flow of
  // the scenario runs there: then its bytes cannot be told from the job's).
  Result<void> finish(const emulator::TopologyPlan& plan) override {
    auto bridge = emulator::control_bridge_bytes(plan);
    if (!bridge || flows_cross_bridge(e_.scenarios[cell_.scenario], plan)) {
      return bridge ? Result<void>() : Result<void>(bridge.error());
    }
    const std::uint64_t sent = *bridge - std::min(*bridge, bridge_before_);
    if (sent <= kMostBridgeBytes) {
      return {};
    }
    return make_error(Errc::kInvalidArgument,
                      "the job's ranks sent " + format_size(sent) +
                          " over the run's control bridge (198.18.255.x, cbr0), which no link shapes: its data "
                          "went around the scenario's network and its throughput is not one the scenario made; "
                          "connect the ranks by their link addresses ({addr}, {peers}, MASTER_ADDR), not by an "
                          "address found with `hostname -I` or written in a config");
  }

 private:
  // What a cell may send on the bridge without a word: neighbour discovery and the like, a few KB.
  static constexpr std::uint64_t kMostBridgeBytes = 1u << 20;

  const Experiment& e_;
  const Cell& cell_;
  const CellFiles& files_;
  const LaunchOptions& o_;
  std::vector<RankPlace> places_;
  int ranks_ = 0;                    // guards started
  std::uint64_t bridge_before_ = 0;  // the control bridge's bytes before the ranks started
};

}  // namespace

Result<void> run_job_cell(const Experiment& e, const Cell& cell, const CellFiles& files, const LaunchOptions& o,
                          const std::atomic<bool>& stop) {
  CommandCell kind(e, cell, files, o);
  return run_in_namespaces(e, cell, files, kind, stop);
}

}  // namespace contend::runner
