#pragma once
// A fabric's flows at the flow level, without root or namespaces (`contend emu predict`): the
// network as the scenario has it at a time (rates set, links down, flows running), each TCP
// stream's path, and every stream's max-min fair share of the ports it crosses. Pure.
//
// The model, stated: a stream leaves its host by the host's first NIC and reaches the other
// host's NIC on the same switch where it has one (the same rail), else its first, as background
// flows do (flow_engine.h: from the topology alone, so a flow whose NIC's link is down is
// unroutable, as it is on the emulator); it takes a shortest path through switches (hosts never forward), each
// switch choosing among its equal-cost next hops by a hash of the stream (flow name, stream
// index) and the switch's name: the same stream takes the same path in every prediction, and
// streams spread over equal-cost paths as evenly as ECMP spreads them, but which path a given
// stream takes is not the kernel's choice (its hash is of the real 5-tuple, ports drawn at
// connect). Each port (a shaped end's egress) carries TCP goodput up to 0.956 x its rate; the
// rates are max-min fair (progressive filling), each stream held to its flow's pacing share.

#include <map>
#include <string>
#include <vector>

#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

// TCP's goodput over a shaped rate (docs/emulator.md, "Measured here").
inline constexpr double kFabricGoodput = 0.956;

struct PredictedFlow {
  std::string name;
  std::string from;
  std::string to;
  int streams = 1;
  double rate_bps = 0;             // goodput, all streams together
  std::vector<std::string> ports;  // every port a stream crossed, "<link>@<node>", in path order
  std::string bottleneck;          // the port that held its slowest stream ("" when its pacing did)
};

struct PortLoad {
  double capacity_bps = 0;  // goodput the port carries at its rate (0: the link is down)
  double load_bps = 0;      // what the flows put through it
  int streams = 0;
};

struct FabricPrediction {
  double at_s = 0;
  std::vector<PredictedFlow> flows;       // every flow running at at_s, in start order
  std::map<std::string, PortLoad> ports;  // every port, "<link>@<node>"
  std::vector<std::string> unroutable;    // flows no path joins at at_s (a link down), by name
};

// The scenario's network at `at_s` (rates and link states as its timeline left them, flows started
// and not stopped), every flow's streams routed and shared max-min. A flow between hosts that a
// link joins directly crosses that link; elsewhere, the fabric. A closed-loop job's flows are
// taken as streams here: their shares while the job sends (predict_run says when it does).
FabricPrediction predict_flows(const Scenario& s, double at_s);

// How the paths of the model above cross `link` from host `from` to host `to`, in the network at
// time 0: none of them, some (which one a stream takes is the hash's: ECMP's on the emulator), or
// every one (the hosts' own NICs' links, a switch link on every equal-cost path).
enum class PathCrossing { kNone, kSome, kEvery };
PathCrossing paths_cross(const Scenario& s, const std::string& from, const std::string& to, const std::string& link);

// A closed-loop job's iterations as the replay runs them (predict_run).
struct PredictedJob {
  std::string job;
  std::vector<double> iterations_s;  // every iteration it ended before the scenario's end
};

struct PredictedRun {
  // The network at 0 and at every later time (before the scenario's end) when it or the flows
  // sending change, in time order (kept when asked for; each prediction's `ports` are those a
  // stream crosses).
  std::vector<FabricPrediction> timeline;
  std::vector<PredictedJob> jobs;      // by the time each started
  std::map<std::string, double> bits;  // what each flow delivered over the run (its rate integrated)
  // Each watched open-loop flow's rate (predict_watching): (time, bit/s) from time 0 (0 until it
  // starts) and at every change, 0 after its stop.
  std::map<std::string, std::vector<std::pair<double, double>>> rates;
};

// The whole run replayed at the flow level. Open-loop flows run from their start to their stop; a
// closed-loop job's flows ("iterate") take part only while they send: each iteration every flow
// computes for the job's compute time, then sends its bytes at its max-min share of the moment
// (shares recomputed whenever a flow starts or finishes sending, or the timeline changes), and the
// iteration ends when the job's last flow is through, as a collective ends with its slowest
// transfer. A flow that joins a job computes first, then sends; a job whose flows cross only
// unshaped ports and compute nothing ends no iteration (it would take no time). Not modelled:
// TCP's slow start and the shapers' token buckets (a port idle during the compute bursts at its
// start: a data-parallel job measured at 459.4 ms an iteration against the model's 463,
// docs/tenants.md).
// Without `timeline` only the jobs and the bits are kept, and each prediction holds the flows'
// rates alone: several times faster, and in constant memory, at scale.
PredictedRun predict_run(const Scenario& s, bool timeline = true);
// predict_run(s).timeline.
std::vector<FabricPrediction> predict_timeline(const Scenario& s);
// The run replayed keeping the jobs, the bits, the first prediction whole (`timeline` holds it
// alone) and the rates of the open-loop flows named in `watched`: what one flow meets over the run,
// in memory that grows with the watched flows' changes alone, where the timeline would hold every
// flow at every change.
PredictedRun predict_watching(const Scenario& s, const std::vector<std::string>& watched);

}  // namespace contend::emulator
