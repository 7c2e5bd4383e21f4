#include "sim_command.h"

#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cli_units.h"
#include "commands.h"
#include "contend/common/fd.h"
#include "contend/common/units.h"
#include "contend/schedule/csv.h"
#include "contend/schedule/registry.h"
#include "contend/schedule/validation.h"
#include "contend/sim/chrome_trace.h"
#include "contend/sim/report.h"
#include "contend/sim/simulator.h"

namespace contend::tools {
namespace {

struct SimOptions {
  int stages = 0;
  int microbatches = 0;
  std::vector<std::string> schedules{"1f1b"};
  std::string fwd;
  std::string bwd;
  std::string activation = "0";
  std::string bandwidth;
  std::string bandwidth_trace;
  std::string latency = "0s";
  std::string burst = "0";
  std::string line_rate;
  std::string json_path;
  std::string csv_path;
  std::string csv_layout = "aligned";
  std::string chrome_trace_path;
};

// "out.csv" for one schedule; "out.kfkb-k-2.csv" when several share the option.
std::string path_for(const std::string& path, const std::string& schedule, bool several) {
  if (!several || path == "-") {
    return path;
  }
  std::string tag;
  for (char c : schedule) {
    tag += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  }
  const auto dot = path.find_last_of('.');
  const auto slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    return path + "." + tag;
  }
  return path.substr(0, dot) + "." + tag + path.substr(dot);
}

Result<void> write_output(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    return {};
  }
  return write_file_atomic(path, text);
}

// Every link's model from the options; an error message on failure.
Result<sim::LinkModel> link_model(const SimOptions& o) {
  sim::LinkModel link;
  link.latency_s = to_seconds(*parse_duration(o.latency));
  link.burst_bytes = RateTrace::constant(static_cast<double>(*parse_size_bytes(o.burst)));
  if (!o.line_rate.empty()) {
    link.line_bps = *parse_rate_bps(o.line_rate);
  }
  if (!o.bandwidth.empty()) {
    const double rate = *parse_rate_bps(o.bandwidth);
    if (rate <= 0) {
      return make_error(Errc::kInvalidArgument, "--bandwidth must be positive, got \"" + o.bandwidth + "\"");
    }
    link.rate = RateTrace::constant(rate);
  } else if (!o.bandwidth_trace.empty()) {
    auto text = read_file(o.bandwidth_trace);
    if (!text) {
      return text.error();
    }
    auto trace = parse_rate_trace_csv(*text, o.bandwidth_trace);
    if (!trace) {
      return trace.error();
    }
    link.rate = std::move(*trace);
  }
  return link;
}

Error too_long_a_trace(const Spec& spec, std::size_t events) {
  return make_error(Errc::kInvalidArgument,
                    "--chrome-trace: " + spec.str() + " would trace " + std::to_string(events) +
                        " actions or more, more than the " + std::to_string(sim::kMaxTraceEvents) +
                        " a trace may hold (about 150 MB); trace fewer stages or micro-batches");
}

// Simulates one schedule and writes its CSV and trace when asked.
Result<sim::SimResult> simulate_one(const SimOptions& o, const Spec& spec, const sim::LinkModel& link) {
  // Every micro-batch runs a forward and a backward on every stage: a trace past the cap is
  // refused before its schedule is made.
  const auto at_least = 2 * static_cast<std::size_t>(o.stages) * static_cast<std::size_t>(o.microbatches);
  if (!o.chrome_trace_path.empty() && at_least > sim::kMaxTraceEvents) {
    return too_long_a_trace(spec, at_least);
  }
  auto schedule = schedule::make_schedule(spec, o.stages, o.microbatches);
  if (!schedule) {
    return schedule.error();
  }
  if (auto valid = schedule::validate(*schedule); !valid) {
    return valid.error();
  }
  const double fwd_s = to_seconds(*parse_duration(o.fwd));
  const double bwd_s = o.bwd.empty() ? 2 * fwd_s : to_seconds(*parse_duration(o.bwd));
  auto config = sim::uniform_config(schedule->num_stages, schedule->chunks_per_rank(), fwd_s, bwd_s,
                                    *parse_size_bytes(o.activation), link);
  config.record_trace = !o.chrome_trace_path.empty();
  if (config.record_trace) {
    std::size_t events = 0;
    for (const auto& rank : schedule::lower(*schedule).ranks) {
      events += rank.size();
    }
    if (events > sim::kMaxTraceEvents) {
      return too_long_a_trace(spec, events);
    }
  }
  auto result = sim::simulate(*schedule, config);
  if (!result) {
    return result.error();
  }
  const bool several = o.schedules.size() > 1;
  if (!o.csv_path.empty()) {
    const auto layout = o.csv_layout == "compact" ? schedule::CsvLayout::kCompact : schedule::CsvLayout::kAligned;
    auto csv = schedule::to_csv(o.csv_layout == "lowered" ? schedule::lower(*schedule) : *schedule, layout);
    if (!csv) {
      return csv.error();
    }
    if (auto ok = write_output(path_for(o.csv_path, spec.str(), several), *csv); !ok) {
      return ok.error();
    }
  }
  if (!o.chrome_trace_path.empty()) {
    if (auto ok = write_output(path_for(o.chrome_trace_path, spec.str(), several), sim::chrome_trace_json(*result));
        !ok) {
      return ok.error();
    }
    result->trace.clear();
  }
  return result;
}

int run(const SimOptions& o) {
  auto link = link_model(o);
  if (!link) {
    return fail("sim", link.error().message);
  }
  std::vector<sim::SimResult> results;
  for (const std::string& text : o.schedules) {
    auto result = simulate_one(o, schedule::parse_schedule(text).value(), *link);
    if (!result) {
      return fail("sim", result.error().message);
    }
    results.push_back(std::move(*result));
  }
  // With JSON on stdout, the table goes to stderr so stdout stays machine-readable.
  (o.json_path == "-" ? std::cerr : std::cout) << sim::sim_table(results);
  if (o.json_path.empty()) {
    return 0;
  }
  const double fwd_s = to_seconds(*parse_duration(o.fwd));
  nlohmann::ordered_json inputs = {{"stages", o.stages},
                                   {"microbatches", o.microbatches},
                                   {"fwd_s", fwd_s},
                                   {"bwd_s", o.bwd.empty() ? 2 * fwd_s : to_seconds(*parse_duration(o.bwd))},
                                   {"activation_bytes", *parse_size_bytes(o.activation)},
                                   {"latency_s", link->latency_s}};
  if (!o.bandwidth.empty()) {
    inputs["bandwidth_bps"] = link->rate.points().front().rate_bps;
  } else if (!o.bandwidth_trace.empty()) {
    inputs["bandwidth_trace"] = o.bandwidth_trace;
  }
  if (auto ok = write_output(o.json_path, sim::sim_json(results, inputs).dump(2) + "\n"); !ok) {
    return fail("sim", ok.error().message);
  }
  return 0;
}

}  // namespace

std::function<int()> add_sim_command(CLI::App& sub) {
  auto o = std::make_shared<SimOptions>();
  std::string names;
  for (const SpecEntry* e : schedule::schedule_entries()) {
    names += "\n    " + syntax(*e) + ": " + e->help;
  }
  CLI::App* sim = &sub;
  sim->add_option("--stages,-p", o->stages, "Pipeline ranks P")->required()->check(CLI::PositiveNumber);
  sim->add_option("--microbatches,-m", o->microbatches, "Micro-batches per iteration M")
      ->required()
      ->check(CLI::PositiveNumber);
  sim->add_option("--schedule,-s", o->schedules, "Schedule to simulate; repeat to compare (default 1f1b):" + names)
      ->take_all()
      ->check(spec_check("SCHEDULE", schedule::parse_schedule));
  sim->add_option("--fwd", o->fwd, "Forward time of one micro-batch on one rank (duration, e.g. 10ms)")
      ->required()
      ->check(duration_check());
  sim->add_option("--bwd", o->bwd, "Backward time of one micro-batch on one rank (duration; default 2 x --fwd)")
      ->check(duration_check());
  sim->add_option("--activation", o->activation,
                  "Activation (and gradient) size sent between ranks per micro-batch "
                  "(size, e.g. 16MiB; default 0)")
      ->check(size_check());
  auto* bw = sim->add_option("--bandwidth", o->bandwidth,
                             "Rate of every inter-rank link, each direction "
                             "(rate, e.g. 10Gbit; default unlimited)")
                 ->check(rate_check());
  sim->add_option("--bandwidth-trace", o->bandwidth_trace, "CSV \"time_s,rate\" giving every link's rate over time")
      ->check(CLI::ExistingFile)
      ->excludes(bw);
  sim->add_option("--latency", o->latency, "Latency added to every transfer (duration; default 0s)")
      ->check(duration_check());
  sim->add_option("--burst", o->burst,
                  "Token-bucket depth of every link: bytes that pass at once after it idles, "
                  "as HTB's burst (size; default 0, a pure rate)")
      ->check(size_check());
  sim->add_option("--line-rate", o->line_rate,
                  "How fast the burst passes: the unshaped path's rate (rate; default unlimited, at once)")
      ->check(rate_check());
  sim->add_option("--json", o->json_path,
                  "Write contend.sim/1 JSON to FILE, or - for stdout (the table then goes to stderr)");
  sim->add_option("--csv", o->csv_path,
                  "Write the per-rank action CSV (PyTorch's layout) to FILE; with several "
                  "schedules FILE gets the schedule's name inserted before its extension");
  sim->add_option("--csv-layout", o->csv_layout,
                  "aligned (time steps, idle cells), compact, or lowered (with sends and receives)")
      ->check(CLI::IsMember({"aligned", "compact", "lowered"}));
  sim->add_option("--chrome-trace", o->chrome_trace_path,
                  "Write a Chrome trace (chrome://tracing, Perfetto) to FILE; "
                  "named per schedule as --csv");
  return [o] { return run(*o); };
}

}  // namespace contend::tools
