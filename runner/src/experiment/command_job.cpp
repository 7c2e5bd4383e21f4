#include "contend/runner/experiment/command_job.h"

#include <algorithm>
#include <filesystem>
#include <functional>

#include "contend/pipeline/transport/nccl_isolation.h"

namespace contend::runner {
namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    out += (out.empty() ? "" : ",") + item;
  }
  return out;
}

struct Placeholder {
  const char* name;
  std::function<std::string(const RankPlace&, const CommandJob&)> value;
};

// The one table of placeholders: docs/own-job.md lists the same.
const std::vector<Placeholder>& placeholders() {
  static const std::vector<Placeholder> kTable = {
      {"rank", [](const RankPlace& p, const CommandJob&) { return std::to_string(p.rank); }},
      {"world_size", [](const RankPlace& p, const CommandJob&) { return std::to_string(p.world); }},
      {"local_rank", [](const RankPlace&, const CommandJob&) { return std::string("0"); }},
      {"node", [](const RankPlace& p, const CommandJob&) { return p.node; }},
      {"addr", [](const RankPlace& p, const CommandJob&) { return p.address; }},
      {"ifname", [](const RankPlace& p, const CommandJob&) { return p.ifname; }},
      {"peers", [](const RankPlace& p, const CommandJob&) { return joined(p.addresses); }},
      {"nodes", [](const RankPlace& p, const CommandJob&) { return joined(p.nodes); }},
      {"master_addr", [](const RankPlace& p, const CommandJob&) { return p.addresses.at(0); }},
      {"master_port", [](const RankPlace&, const CommandJob& j) { return std::to_string(j.port); }},
      {"out", [](const RankPlace& p, const CommandJob&) { return p.out; }},
      {"experiment_dir", [](const RankPlace&, const CommandJob& j) { return j.folder; }},
  };
  return kTable;
}

Error unknown_placeholder(const std::string& text, const std::string& what) {
  std::string known;
  for (const std::string& name : placeholder_names()) {
    known += (known.empty() ? "" : ", ") + name;
  }
  return make_error(Errc::kInvalidArgument, "\"" + text + "\": " + what + "; known placeholders: " + known +
                                                " (\"{{\" and \"}}\" are literal braces)");
}

}  // namespace

const std::vector<std::string>& placeholder_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> out;
    for (const Placeholder& p : placeholders()) {
      out.push_back(std::string("{") + p.name + "}");
    }
    return out;
  }();
  return kNames;
}

Result<std::string> expand_placeholders(const std::string& text, const RankPlace& place, const CommandJob& job) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}') {
      return unknown_placeholder(text, "a '}' without its '{' (write \"}}\" for a brace)");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    const std::size_t close = text.find('}', i);
    if (close == std::string::npos) {
      return unknown_placeholder(text, "a '{' without its '}'");
    }
    const std::string name = text.substr(i + 1, close - i - 1);
    const auto& table = placeholders();
    const auto it = std::find_if(table.begin(), table.end(), [&](const Placeholder& p) { return name == p.name; });
    if (it == table.end()) {
      return unknown_placeholder(text, "unknown placeholder {" + name + "}");
    }
    out += it->value(place, job);
    i = close;
  }
  return out;
}

bool uses_placeholder(const CommandJob& job, const std::string& placeholder) {
  const auto names = [&](const std::string& text) { return text.find(placeholder) != std::string::npos; };
  const auto in_env = [&](const EnvList& env) {
    return std::any_of(env.begin(), env.end(), [&](const auto& kv) { return names(kv.second); });
  };
  if (std::any_of(job.command.begin(), job.command.end(), names) || in_env(job.env)) {
    return true;
  }
  return std::any_of(job.variants.begin(), job.variants.end(), [&](const JobVariant& v) {
    return std::any_of(v.args.begin(), v.args.end(), names) || in_env(v.env);
  });
}

bool workdir_is_template(const CommandJob& job) {
  return job.workdir.find('{') != std::string::npos;
}

Result<std::string> rank_workdir(const CommandJob& job, const RankPlace& place) {
  if (!workdir_is_template(job)) {
    return job.workdir;
  }
  auto expanded = expand_placeholders(job.workdir, place, job);
  if (!expanded) {
    return expanded.error();
  }
  // Absolute already (parse_command_job anchors a relative template under the experiment's folder);
  // on cluster hosts it starts with the host's expression for {out}.
  const auto folder = std::filesystem::path(*expanded).lexically_normal();
  return (folder.has_filename() ? folder : folder.parent_path()).string();  // "x/rank0", not "x/rank0/"
}

Result<std::vector<std::string>> rank_command(const CommandJob& job, const JobVariant& variant,
                                              const RankPlace& place) {
  std::vector<std::string> out;
  for (const auto* part : {&job.command, &variant.args}) {
    for (const std::string& arg : *part) {
      auto expanded = expand_placeholders(arg, place, job);
      if (!expanded) {
        return expanded.error();
      }
      out.push_back(std::move(*expanded));
    }
  }
  return out;
}

Result<std::vector<std::string>> rank_environment(const CommandJob& job, const JobVariant& variant,
                                                  const RankPlace& place) {
  std::vector<std::string> out = {
      "RANK=" + std::to_string(place.rank),
      "WORLD_SIZE=" + std::to_string(place.world),
      "LOCAL_RANK=0",
      "LOCAL_WORLD_SIZE=1",
      "MASTER_ADDR=" + place.addresses.at(0),
      "MASTER_PORT=" + std::to_string(job.port),
      "GLOO_SOCKET_IFNAME=" + place.ifname,
      "NCCL_SOCKET_IFNAME=" + place.ifname,
      "OMPI_MCA_pml=ob1",
      "OMPI_MCA_btl=tcp,self",
      "OMPI_MCA_btl_tcp_if_include=" + place.mpi_networks,
      "OMPI_MCA_oob_tcp_if_include=" + place.mpi_networks,
      "PYTHONUNBUFFERED=1",
      "CONTEND_NODE=" + place.node,
  };
  for (std::string& e : pipeline::nccl_isolation_environment(place.node)) {
    out.push_back(std::move(e));
  }
  for (const auto* env : {&job.env, &variant.env}) {
    for (const auto& [name, value] : *env) {
      auto expanded = expand_placeholders(value, place, job);
      if (!expanded) {
        return with_context(expanded.error(), name);
      }
      // A later entry replaces an earlier one of the same name (the job's own MASTER_PORT, say).
      out.erase(std::remove_if(out.begin(), out.end(),
                               [&](const std::string& e) { return e.compare(0, name.size() + 1, name + "=") == 0; }),
                out.end());
      out.push_back(name + "=" + *expanded);
    }
  }
  return out;
}

}  // namespace contend::runner
