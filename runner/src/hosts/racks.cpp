#include "hosts/racks.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "contend/common/child_process.h"
#include "contend/common/fd.h"
#include "contend/common/json.h"

namespace contend::runner {
namespace {

// The names `group` lists under `key` ("children", "hosts"); empty when it lists none.
Result<std::vector<std::string>> listed(const nlohmann::json& inventory, const std::string& group,
                                        const std::string& key, const std::string& source) {
  const auto g = inventory.find(group);
  if (g == inventory.end() || !g->is_object() || !g->contains(key)) {
    return std::vector<std::string>{};
  }
  const nlohmann::json& names = g->at(key);
  if (!names.is_array() || !std::all_of(names.begin(), names.end(), [](const auto& n) { return n.is_string(); })) {
    return make_error(Errc::kInvalidArgument, source + ": group " + group + "'s " + key +
                                                  ": expected a list of names, got " + quote_json(names));
  }
  return names.get<std::vector<std::string>>();
}

// The fabric's hosts in the order of their links (a generator's h0, h1, ...).
std::vector<std::string> hosts_by_links(const emulator::Scenario& s) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const emulator::LinkSpec& l : s.links) {
    for (const std::string* end : {&l.from, &l.to}) {
      if (!s.is_switch(*end) && seen.insert(*end).second) {
        out.push_back(*end);
      }
    }
  }
  return out;
}

}  // namespace

Result<Racks> parse_racks(const std::string& text, const std::string& source) {
  auto inventory = parse_json(text, source);
  if (!inventory) {
    return make_error(Errc::kInvalidArgument, inventory.error().message);
  }
  if (!inventory->is_object() || !inventory->contains("nodes")) {
    return make_error(Errc::kInvalidArgument, source + ": no group `nodes` (the hosts the ranks run on)");
  }
  auto groups = listed(*inventory, "nodes", "children", source);
  auto loose = listed(*inventory, "nodes", "hosts", source);
  if (auto err = first_error(groups, loose)) {
    return *err;
  }
  if (groups->empty()) {
    return make_error(Errc::kInvalidArgument,
                      source + ": a fabric scenario on cluster hosts reads the racks from the groups under `nodes` " +
                          "(nodes: children: rack1: hosts: ...), and `nodes` has none");
  }
  if (!loose->empty()) {
    return make_error(Errc::kInvalidArgument,
                      source + ": host " + loose->front() + " is in `nodes` but in none of its groups (the racks)");
  }
  Racks out;
  std::map<std::string, std::string> rack_of;
  for (const std::string& group : *groups) {
    auto hosts = listed(*inventory, group, "hosts", source);
    if (!hosts) {
      return hosts.error();
    }
    if (hosts->empty()) {
      return make_error(Errc::kInvalidArgument, source + ": rack " + group + " (a group under `nodes`) has no hosts");
    }
    for (const std::string& h : *hosts) {
      if (auto [it, fresh] = rack_of.emplace(h, group); !fresh) {
        return make_error(Errc::kInvalidArgument,
                          source + ": host " + h + " is in two racks, " + it->second + " and " + group);
      }
    }
    out.names.push_back(group);
    out.hosts.push_back(std::move(*hosts));
  }
  return out;
}

namespace {

// ansible-inventory's --list of `inventory` written to `answer`, its own words to `log`.
Result<void> list_inventory(const std::string& inventory, const std::string& answer, const std::string& log) {
  ChildOptions co;
  co.output_path = log;
  auto child = ChildProcess::spawn({"ansible-inventory", "-i", inventory, "--list", "--output", answer}, co);
  if (!child) {
    return make_error(child.error().code, "reading the racks of " + inventory + ": " + child.error().message +
                                              " (apt-get install ansible-core)");
  }
  auto code = child->wait(std::chrono::seconds(120));
  if (!code) {
    child->terminate();
    return make_error(Errc::kIo, "ansible-inventory -i " + inventory + " --list took over 120 s");
  }
  if (*code != 0) {
    return make_error(Errc::kIo,
                      "ansible-inventory -i " + inventory + " --list " + ending(*code) + ": " + file_tail(log, 1000));
  }
  return {};
}

}  // namespace

Result<Racks> read_racks(const std::string& inventory) {
  std::error_code ec;
  if (!std::filesystem::exists(inventory, ec)) {
    return make_error(Errc::kNotFound, inventory + ": no such inventory (a fabric on cluster hosts reads its racks)");
  }
  std::string dir = (std::filesystem::temp_directory_path(ec) / "contend-inventory-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) {
    return make_error(Errc::kIo, "cannot make a folder for ansible-inventory's answer: " + dir);
  }
  auto listed = list_inventory(inventory, dir + "/list.json", dir + "/log");
  Result<std::string> text =
      listed ? read_file(dir + "/list.json", kMaxJsonBytes) : Result<std::string>(listed.error());
  std::filesystem::remove_all(dir, ec);
  if (!text) {
    return text.error();
  }
  return parse_racks(*text, inventory);
}

Result<std::map<std::string, std::string>> hosts_on_racks(const emulator::Scenario& s, const Racks& racks,
                                                          const std::string& inventory) {
  const auto leaves = emulator::hosts_by_leaf(s, hosts_by_links(s));
  if (leaves.size() != racks.hosts.size()) {
    return make_error(Errc::kInvalidArgument, s.source + ": the fabric's " + std::to_string(leaves.size()) +
                                                  " leaves stand for the racks of " + inventory + ", which has " +
                                                  std::to_string(racks.hosts.size()) +
                                                  " (the groups under `nodes`): one rack per leaf, in order");
  }
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    if (leaves[i].size() != racks.hosts[i].size()) {
      return make_error(Errc::kInvalidArgument, s.source + ": leaf " + emulator::leaf_of(s, leaves[i].front()) +
                                                    " has " + std::to_string(leaves[i].size()) + " hosts, and rack " +
                                                    racks.names[i] + " (" + inventory + "), which stands for it, has " +
                                                    std::to_string(racks.hosts[i].size()) +
                                                    ": a rack's hosts stand for its leaf's one by one");
    }
    for (std::size_t h = 0; h < leaves[i].size(); ++h) {
      out[leaves[i][h]] = racks.hosts[i][h];
    }
  }
  return out;
}

}  // namespace contend::runner
