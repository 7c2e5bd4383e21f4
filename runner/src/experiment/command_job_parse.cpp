// Parsing a command experiment's workload and variants (docs/own-job.md), strictly: every error
// names the file, the JSON pointer and what was expected.

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <tuple>

#include "contend/common/units.h"
#include "contend/runner/experiment/command_job.h"

namespace contend::runner {
namespace {

constexpr std::size_t kMaxArgs = 1024;
constexpr std::size_t kMaxText = 4096;
constexpr int kMaxRanks = 64;

// A template checked against a stand-in rank, so an unknown placeholder fails before anything runs.
Result<void> check_template(const JsonReader& at, const std::string& text, const CommandJob& job) {
  if (text.size() > kMaxText) {
    return at.error("expected at most " + std::to_string(kMaxText) + " characters");
  }
  const RankPlace stand_in{0, 1, "n0", "198.18.0.1", "eth0", {"198.18.0.1"}, {"n0"}, "/tmp"};
  if (auto ok = expand_placeholders(text, stand_in, job); !ok) {
    return at.error(ok.error().message);
  }
  return {};
}

// A list of strings, each a template: "command" or a variant's "args".
Result<std::vector<std::string>> read_args(const JsonReader& r, const CommandJob& job, bool allow_empty) {
  if (auto ok = r.expect_array(); !ok) {
    return ok.error();
  }
  if (r.json().size() > kMaxArgs || (!allow_empty && r.json().empty())) {
    return r.error("expected " + std::string(allow_empty ? "" : "1 to ") + "at most " + std::to_string(kMaxArgs) +
                   " strings (a program and its arguments; a shell line is [\"sh\", \"-c\", \"...\"])");
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < r.json().size(); ++i) {
    const JsonReader arg = r.at(i);
    if (!arg.json().is_string()) {
      return arg.error("expected a string");
    }
    if (auto ok = check_template(arg, arg.json().get<std::string>(), job); !ok) {
      return ok.error();
    }
    out.push_back(arg.json().get<std::string>());
  }
  return out;
}

bool env_name(const std::string& name) {
  return !name.empty() && name.size() <= 128 && std::isdigit(static_cast<unsigned char>(name[0])) == 0 &&
         std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

// {"NAME": "value", ...}: names of letters, digits and '_', values templates.
Result<EnvList> read_env(const JsonReader& r, const CommandJob& job) {
  if (auto ok = r.expect_object(); !ok) {
    return ok.error();
  }
  EnvList out;
  for (const auto& item : r.json().items()) {
    const JsonReader value = r.at(item.key());
    if (!env_name(item.key())) {
      return value.error("expected a variable name of letters, digits and '_' (not first a digit)");
    }
    if (!item.value().is_string()) {
      return value.error("expected a string");
    }
    if (auto ok = check_template(value, item.value().get<std::string>(), job); !ok) {
      return ok.error();
    }
    out.emplace_back(item.key(), item.value().get<std::string>());
  }
  return out;
}

Result<void> read_numbers(const JsonReader& r, CommandJob& job) {
  const std::tuple<const char*, long long, long long, int*> counts[] = {
      {"ranks", 1, kMaxRanks, &job.ranks},
      {"output_rank", 0, kMaxRanks - 1, &job.output_rank},
      {"warmup", 0, 1000000, &job.warmup},
      {"steps", 1, 1000000, &job.steps},
      {"port", 1024, 65535, &job.port}};
  for (const auto& [key, lo, hi, out] : counts) {
    if (auto ok = read_count(r, key, lo, hi, *out); !ok) {
      return ok;
    }
  }
  auto timeout = r.optional_duration("timeout");
  if (!timeout) {
    return timeout.error();
  }
  if (*timeout) {
    if (**timeout < std::chrono::seconds(1) || **timeout > std::chrono::hours(24)) {
      return r.error_at("timeout", "expected 1s to 24h, got " + format_duration(**timeout));
    }
    job.timeout = std::chrono::duration_cast<std::chrono::seconds>(**timeout);
  }
  auto least = r.optional_size_bytes("min_link_bytes_per_step");
  if (!least) {
    return least.error();
  }
  job.min_link_bytes_per_step = least->value_or(job.min_link_bytes_per_step);
  return {};
}

Result<JobVariant> read_variant(const JsonReader& r, const CommandJob& job) {
  if (auto ok = r.check_keys({"name", "args", "env"}); !ok) {
    return ok.error();
  }
  auto name = r.string("name");
  if (!name) {
    return name.error();
  }
  const bool plain = !name->empty() && name->size() <= 64 && std::all_of(name->begin(), name->end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.' || c == '=';
  });
  if (!plain) {
    return r.error_at("name", "expected 1-64 letters, digits, '-', '_', '.' or '=', got \"" + *name + "\"");
  }
  JobVariant v{*name, {}, {}};
  if (r.has("args")) {
    auto args = read_args(r.at("args"), job, true);
    if (!args) {
      return args.error();
    }
    v.args = std::move(*args);
  }
  if (r.has("env")) {
    auto env = read_env(r.at("env"), job);
    if (!env) {
      return env.error();
    }
    v.env = std::move(*env);
  }
  return v;
}

Result<void> read_variants(const JsonReader& r, CommandJob& job) {
  if (r.json().is_null()) {
    job.variants.push_back({"job", {}, {}});  // no "variants": the command as it is
    return {};
  }
  if (auto ok = r.expect_array(); !ok) {
    return ok;
  }
  if (r.json().empty() || r.json().size() > 256) {
    return r.error("expected 1 to 256 variants");
  }
  for (std::size_t i = 0; i < r.json().size(); ++i) {
    auto v = read_variant(r.at(i), job);
    if (!v) {
      return v.error();
    }
    for (const JobVariant& earlier : job.variants) {
      if (earlier.name == v->name) {
        return r.at(i).error_at("name", "variant \"" + v->name + "\" appears twice");
      }
    }
    job.variants.push_back(std::move(*v));
  }
  return {};
}

// An absolute, normal folder without a trailing separator ("experiments", not "experiments/"); an
// empty path is the current folder (an experiment file named without one: `contend run e.json`).
std::string folder_of(const std::filesystem::path& path) {
  const auto f = std::filesystem::absolute(path.empty() ? std::filesystem::path(".") : path).lexically_normal();
  return (f.has_filename() ? f : f.parent_path()).string();
}

// "workdir" (`dir`): a folder relative to the experiment's (`experiment_folder`), or a template
// whose placeholders are checked here (expanded for a stand-in rank), made for each rank and cell;
// a relative template is made one under the experiment's folder.
Result<void> read_workdir(const JsonReader& r, const std::string& experiment_folder, const std::string& dir,
                          CommandJob& job) {
  job.folder = folder_of(experiment_folder);
  if (dir.find('{') == std::string::npos) {
    job.workdir = folder_of(std::filesystem::path(experiment_folder) / dir);
    return {};
  }
  // A template that does not start at a folder of its own ("/", {out}, {experiment_dir}) is under
  // the experiment's folder, whose braces are literal.
  const bool anchored = dir.front() == '/' || dir.rfind("{out}", 0) == 0 || dir.rfind("{experiment_dir}", 0) == 0;
  std::string folder;
  for (const char c : job.folder) {
    folder += c == '{' || c == '}' ? std::string(2, c) : std::string(1, c);
  }
  job.workdir = anchored ? dir : folder + "/" + dir;
  RankPlace stand_in;
  stand_in.addresses = {"198.18.0.1"};
  if (auto ok = expand_placeholders(dir, stand_in, job); !ok) {
    return r.error_at("workdir", ok.error().message);
  }
  return {};
}

}  // namespace

Result<CommandJob> parse_command_job(const JsonReader& r, const JsonReader& variants, const std::string& workdir) {
  if (auto ok = r.check_keys({"command", "env", "output", "ranks", "output_rank", "warmup", "steps", "timeout", "port",
                              "workdir", "launch", "min_link_bytes_per_step"});
      !ok) {
    return ok.error();
  }
  CommandJob job;
  if (auto ok = read_numbers(r, job); !ok) {
    return ok.error();
  }
  auto command = read_args(r.at("command"), job, false);
  if (!command) {
    return command.error();
  }
  job.command = std::move(*command);
  if (r.has("env")) {
    auto env = read_env(r.at("env"), job);
    if (!env) {
      return env.error();
    }
    job.env = std::move(*env);
  }
  auto output = r.has("output") ? parse_output(r.at("output")) : Result<OutputSpec>(OutputSpec{});
  if (!output) {
    return output.error();
  }
  job.output = std::move(*output);
  auto dir = r.optional_string("workdir");
  auto launch = r.optional_string("launch");
  if (auto e = first_error(dir, launch)) {
    return *e;
  }
  if (launch->value_or("every-rank") != "every-rank" && **launch != "rank-0") {
    return r.error_at("launch",
                      "expected \"every-rank\" (the command on each node) or \"rank-0\" (only on the "
                      "first node: a launcher such as mpirun that starts the other ranks), got \"" +
                          **launch + "\"");
  }
  job.launch_rank0_only = launch->value_or("every-rank") == "rank-0";
  if (job.launch_rank0_only && job.output_rank != 0) {
    return r.error_at("output_rank", "with \"launch\": \"rank-0\" only rank 0 runs, and its output is read");
  }
  if (auto ok = read_workdir(r, workdir, dir->value_or("."), job); !ok) {
    return ok.error();
  }
  if (auto ok = read_variants(variants, job); !ok) {
    return ok.error();
  }
  return job;
}

}  // namespace contend::runner
