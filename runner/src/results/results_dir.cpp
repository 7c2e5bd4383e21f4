#include "results/results_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/json_reader.h"
#include "contend/common/records.h"
#include "contend/runner/experiment/experiment.h"

namespace contend::runner {
namespace {

// mkdir -p of the parents, then an exclusive mkdir of `path` itself: false when it exists.
Result<bool> make_fresh(const std::string& path) {
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      return make_error(Errc::kIo, "create " + parent.string() + ": " + ec.message());
    }
  }
  if (::mkdir(path.c_str(), 0755) == 0) {
    return true;
  }
  if (errno == EEXIST) {
    return false;
  }
  return errno_error(errno, "mkdir(" + path + ")");
}

}  // namespace

Result<std::string> create_results_dir(const std::string& requested, const std::string& default_path) {
  std::string dir = requested;
  if (!requested.empty()) {
    auto fresh = make_fresh(requested);
    if (!fresh) {
      return fresh.error();
    }
    if (!*fresh) {
      return make_error(Errc::kInvalidArgument, requested +
                                                    " exists: results are never overwritten (choose another --out, "
                                                    "or --resume " +
                                                    requested + ")");
    }
  } else {
    for (int n = 1;; ++n) {
      dir = n == 1 ? default_path : default_path + "-" + std::to_string(n);
      auto fresh = make_fresh(dir);
      if (!fresh) {
        return fresh.error();
      }
      if (*fresh) {
        break;
      }
    }
  }
  for (const char* sub : {"runs", "events", "traces"}) {
    if (::mkdir((dir + "/" + sub).c_str(), 0755) != 0) {
      return errno_error(errno, "mkdir(" + dir + "/" + sub + ")");
    }
  }
  return dir;
}

Result<void> check_resume(const std::string& dir, const std::string& experiment, const std::string& mode,
                          const std::string& files) {
  for (const char* entry : {"env.json", "cells.jsonl", "summary.json", "summary.csv", "calibration.json", "report.log",
                            "runs", "events", "traces", "truth", "report"}) {
    struct stat st {};
    if (::lstat((dir + "/" + entry).c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      return make_error(Errc::kInvalidArgument, "--resume " + dir + ": " + entry +
                                                    " is a symbolic link: results are never written through one");
    }
  }
  auto env = read_json_file(dir + "/env.json");
  if (!env) {
    return make_error(Errc::kInvalidArgument,
                      "--resume " + dir + ": not a results folder (" + env.error().message + ")");
  }
  const JsonReader r(*env, dir + "/env.json");
  auto name = r.string("experiment");
  auto was = r.string("mode");
  if (auto e = first_error(name, was)) {
    return *e;
  }
  if (*name != experiment) {
    return make_error(Errc::kInvalidArgument,
                      "--resume " + dir + ": holds experiment \"" + *name + "\", not \"" + experiment + "\"");
  }
  if (*was != mode) {
    return make_error(Errc::kInvalidArgument,
                      "--resume " + dir + ": a " + *was + " run; this one is " + mode + " (they do not mix)");
  }
  if (r.has("files_fingerprint")) {
    auto began = r.string("files_fingerprint");
    if (!began) {
      return began.error();
    }
    if (*began != files) {
      return make_error(Errc::kInvalidArgument, "--resume " + dir + ": the experiment file or one of its scenario " +
                                                    "files changed since this run began (fingerprint " + *began +
                                                    ", now " + files + "); its cells and new ones would not " +
                                                    "compare: start a new run (--out), or restore the files");
    }
  }
  return {};
}

Result<int> resumed_repetitions(const std::string& dir) {
  auto env = read_json_file(dir + "/env.json");
  if (!env || !env->is_object()) {
    return 0;
  }
  int began = 0;  // absent: begun with the experiment's count
  if (auto ok = read_count(JsonReader(*env, dir + "/env.json"), "repetitions", 1, kMaxRepetitions, began); !ok) {
    return ok.error();
  }
  return began;
}

namespace {

std::string fmt_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

Result<FinishedCells> finished_cells(const std::string& dir, const std::set<std::string>& cells) {
  FinishedCells out;
  const std::string path = dir + "/cells.jsonl";
  if (::access(path.c_str(), F_OK) != 0) {
    return out;
  }
  auto text = read_file(path);
  if (!text) {
    return text.error();
  }
  std::istringstream in(*text);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    auto json = parse_json(line, path + ":" + std::to_string(n));
    if (!json) {
      return json.error();
    }
    const JsonReader r(*json, path + ":" + std::to_string(n));
    auto id = r.string("id");
    auto throughput = r.number("throughput");
    if (auto e = first_error(id, throughput)) {
      return *e;
    }
    const std::string where = path + ":" + std::to_string(n) + ": cell " + *id;
    if (!cells.empty() && cells.count(*id) == 0) {
      return make_error(Errc::kInvalidArgument, where + " is not one of this experiment's cells (an edited file?)");
    }
    // No unit a run measures in reaches 1e15 a second (a petasample): beyond it, an edited file.
    constexpr double kMostThroughput = 1e15;
    if (!(*throughput > 0) || !(*throughput < kMostThroughput)) {
      return make_error(Errc::kInvalidArgument, where + " has a throughput of " + fmt_number(*throughput) +
                                                    ", which no measured cell has (an edited file?)");
    }
    if (!out.throughput.emplace(*id, *throughput).second) {
      return make_error(Errc::kInvalidArgument, where + " is recorded twice (an edited file?)");
    }
    if (r.has("link_bytes")) {
      auto ports = read_port_bytes(r.at("link_bytes"));
      if (!ports) {
        return ports.error();
      }
      out.link_bytes[*id] = std::move(*ports);
    }
    if (r.has("tenants")) {
      auto tenants = read_tenants(r.at("tenants"));
      if (!tenants) {
        return tenants.error();
      }
      out.tenants[*id] = std::move(*tenants);
    }
  }
  return out;
}

Result<Fd> lock_results_dir(const std::string& dir) {
  auto fd = Fd::open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  if (!fd) {
    if (fd.error().os_errno == ELOOP) {
      return make_error(Errc::kInvalidArgument,
                        dir + " is a symbolic link: results are never written through one (name the folder itself)");
    }
    return fd.error();
  }
  if (::flock(fd->get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return make_error(Errc::kInvalidArgument, dir +
                                                    " is in use by another contend run (two runs of one folder "
                                                    "would run the same cells); wait for it to end");
    }
    return errno_error(errno, "flock(" + dir + ")");
  }
  return fd;
}

Result<void> record_cell(const std::string& dir, const std::string& id, const MeasuredCell& cell,
                         const IterationSpread& spread) {
  auto log = JsonLinesWriter::open(dir + "/cells.jsonl", "contend.cell/1", JsonLinesWriter::Mode::kAppend);
  if (!log) {
    return log.error();
  }
  nlohmann::ordered_json record = {{"id", id},
                                   {"throughput", cell.throughput},
                                   {"median_iteration_s", spread.median_s},
                                   {"slowest_iteration_s", spread.slowest_s},
                                   {"slowest_iteration", spread.slowest}};
  if (cell.steal) {
    record["steal"] = *cell.steal;
  }
  if (cell.others_cpu) {
    record["others_cpu"] = *cell.others_cpu;
  }
  if (!cell.link_bytes.empty()) {
    record["link_bytes"] = port_bytes_json(cell.link_bytes);
  }
  if (!cell.tenants.empty()) {
    record["tenants"] = tenants_json(cell.tenants);
  }
  return (*log)->write(record);
}

}  // namespace contend::runner
