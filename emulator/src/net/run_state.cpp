#include "contend/emulator/net/run_state.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "contend/common/fd.h"
#include "contend/common/json.h"
#include "contend/common/json_reader.h"
#include "contend/emulator/net/topology.h"

namespace contend::emulator {

std::string state_dir() {
  const char* dir = std::getenv("CONTEND_STATE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : "/run/contend";
}

namespace {
constexpr const char* kNewSuffix = ".new.";  // a state file being written: <run>.json.new.<pid>

std::string state_path(const std::string& run) {
  return state_dir() + "/" + run + ".json";
}

}  // namespace

Result<void> write_run_state(const RunState& state) {
  if (::mkdir(state_dir().c_str(), 0755) != 0 && errno != EEXIST) {
    return errno_error(errno, "mkdir(" + state_dir() + ")");
  }
  auto doc = json_document("emu-state", 1);
  doc["run"] = state.run;
  doc["scenario"] = state.scenario;
  doc["namespaces"] = state.namespaces;
  doc["pid"] = ::getpid();
  // Written whole under a temporary name, then linked to its own: link() fails when the name is
  // taken, so readers never see half a file and a run that is up keeps its state.
  const std::string path = state_path(state.run);
  const std::string tmp = path + kNewSuffix + std::to_string(::getpid());
  if (auto ok = write_file_atomic(tmp, doc.dump(2) + "\n"); !ok) {
    return ok;
  }
  const int rc = ::link(tmp.c_str(), path.c_str());
  const int err = errno;
  ::unlink(tmp.c_str());
  if (rc != 0 && err == EEXIST) {
    return make_error(Errc::kInvalidArgument, "run " + state.run + " is up already (its state file " + path +
                                                  " exists); `contend emu down --run " + state.run + "` first");
  }
  if (rc != 0) {
    return errno_error(err, "link(" + tmp + ", " + path + ")");
  }
  return {};
}

Result<std::optional<RunState>> read_run_state(const std::string& run) {
  const std::string path = state_path(run);
  if (::access(path.c_str(), F_OK) != 0) {
    return std::optional<RunState>();
  }
  auto json = read_json_file(path);
  if (!json) {
    return json.error();
  }
  const JsonReader r(*json, path);
  RunState s;
  auto name = r.string("run");
  auto scenario = r.string("scenario");
  if (!name || !scenario || !r.has("namespaces") || !r.json()["namespaces"].is_array()) {
    return r.error("damaged state file: expected run, scenario and namespaces");
  }
  s.run = *name;
  s.scenario = *scenario;
  for (const auto& ns : r.json()["namespaces"]) {
    if (!ns.is_string()) {
      return r.error_at("namespaces", "expected names");
    }
    s.namespaces.push_back(ns.get<std::string>());
  }
  return std::optional<RunState>(std::move(s));
}

Result<void> remove_run_state(const std::string& run) {
  if (::unlink(state_path(run).c_str()) != 0 && errno != ENOENT) {
    return errno_error(errno, "unlink " + state_path(run));
  }
  return {};
}

Result<Scenario> load_run_scenario(const std::string& run) {
  auto state = read_run_state(run);
  if (!state) {
    return state.error();
  }
  if (!*state) {
    return make_error(Errc::kNotFound,
                      "run " + run + " is not up (no state in " + state_dir() + "); `contend emu up SCENARIO` first");
  }
  return load_scenario((*state)->scenario);
}

std::vector<std::string> list_runs() {
  std::vector<std::string> out;
  for (const std::string& name : folder_entries(state_dir())) {
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0 &&
        valid_run_name(name.substr(0, name.size() - 5))) {
      out.push_back(name.substr(0, name.size() - 5));  // a run contend could have made
    }
  }
  return out;
}

}  // namespace contend::emulator
