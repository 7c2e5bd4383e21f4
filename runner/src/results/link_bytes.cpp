#include "results/link_bytes.h"

#include <algorithm>
#include <fstream>
#include <map>

#include "contend/common/json.h"

namespace contend::runner {
namespace {

// A counter's first and last reading in the log.
struct Span {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::uint64_t moved() const { return last - std::min(last, first); }
};

// Reads the counters of the lines of one events log as they come.
class PortReader {
 public:
  explicit PortReader(std::string path) : path_(std::move(path)) {}

  Result<void> read(const nlohmann::json& line, std::size_t number) {
    const std::string kind = line.is_object() && line.contains("kind") && line["kind"].is_string()
                                 ? line["kind"].get<std::string>()
                                 : std::string();
    if (kind == "sample") {
      return sample(line, number);
    }
    if (kind == "port_index") {
      return index(line, number);
    }
    if (kind == "ports") {
      return ports(line, number);
    }
    return {};
  }

  std::vector<PortBytes> result() const {
    std::vector<PortBytes> out;
    for (const End& end : order_) {
      PortBytes p{end.first, end.second, 0, std::nullopt};
      if (auto it = fabric_.find(end); it != fabric_.end()) {
        p.bytes = it->second;
      }
      if (auto it = sampled_.find(end); it != sampled_.end()) {
        p.bytes = it->second.whole ? it->second.whole->moved() : p.bytes;
        // Two counters read one after the other: the workload's may run a little past the whole's.
        p.workload = it->second.workload ? std::optional<std::uint64_t>(std::min(it->second.workload->moved(), p.bytes))
                                         : std::nullopt;
      }
      out.push_back(std::move(p));
    }
    return out;
  }

 private:
  using End = std::pair<std::string, std::string>;  // (link, node)
  // An end's counters in `sample` lines: the whole link's class (HTB's root, TBF) and the workload's.
  struct EndSpans {
    std::optional<Span> whole;
    std::optional<Span> workload;
  };

  Error bad(std::size_t number, const std::string& what) const {
    return make_error(Errc::kParse, path_ + ": line " + std::to_string(number) + ": " + what);
  }

  void seen(const End& end) {
    if (std::find(order_.begin(), order_.end(), end) == order_.end()) {
      order_.push_back(end);
    }
  }

  Result<void> sample(const nlohmann::json& line, std::size_t number) {
    for (const char* key : {"link", "node", "class"}) {
      if (!line.contains(key) || !line[key].is_string()) {
        return bad(number, std::string("a sample without its \"") + key + "\"");
      }
    }
    if (!line.contains("bytes") || !line["bytes"].is_number_unsigned()) {
      return bad(number, "a sample whose \"bytes\" is not a count");
    }
    const End end{line["link"], line["node"]};
    const std::string cls = line["class"];
    const auto bytes = line["bytes"].get<std::uint64_t>();
    seen(end);
    EndSpans& spans = sampled_[end];
    std::optional<Span>& span = cls == "workload" ? spans.workload : spans.whole;
    if (cls == "workload" || cls == "link" || cls == "tbf") {  // the background class is the rest
      span = Span{span ? span->first : bytes, bytes};
    }
    return {};
  }

  Result<void> index(const nlohmann::json& line, std::size_t number) {
    if (!line.contains("ports") || !line["ports"].is_array()) {
      return bad(number, "a port_index without its \"ports\"");
    }
    index_.clear();
    for (const nlohmann::json& p : line["ports"]) {
      if (!p.is_object() || !p.contains("link") || !p["link"].is_string() || !p.contains("node") ||
          !p["node"].is_string()) {
        return bad(number, "a port_index entry without its \"link\" and \"node\"");
      }
      index_.emplace_back(p["link"], p["node"]);
      seen(index_.back());
    }
    return {};
  }

  Result<void> ports(const nlohmann::json& line, std::size_t number) {
    if (!line.contains("kib") || !line["kib"].is_array() || line["kib"].size() != index_.size()) {
      return bad(number, "a ports line whose \"kib\" does not match its port_index");
    }
    for (std::size_t i = 0; i < index_.size(); ++i) {
      if (!line["kib"][i].is_number_unsigned()) {
        return bad(number, "a ports line whose \"kib\" holds something other than counts");
      }
      fabric_[index_[i]] += 1024 * line["kib"][i].get<std::uint64_t>();
    }
    return {};
  }

  std::string path_;
  std::vector<End> order_;               // as first seen
  std::map<End, EndSpans> sampled_;      // `sample` lines
  std::vector<End> index_;               // the port_index
  std::map<End, std::uint64_t> fabric_;  // `ports` lines, summed
};

// The middle value (for an even count, the two middle ones' mean, rounded down); 0 for none.
std::uint64_t median_of(std::vector<std::uint64_t> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

}  // namespace

Result<std::vector<PortBytes>> port_bytes(const std::string& events_path) {
  std::ifstream in(events_path);
  if (!in) {
    return make_error(Errc::kNotFound, events_path + ": cannot read the events log");
  }
  PortReader reader(events_path);
  std::size_t number = 0;
  for (std::string text; std::getline(in, text);) {
    ++number;
    auto line = parse_json(text, events_path + ": line " + std::to_string(number));
    if (!line) {
      return line.error();
    }
    if (auto ok = reader.read(*line, number); !ok) {
      return ok.error();
    }
  }
  return reader.result();
}

std::optional<std::uint64_t> hosts_sent(const std::vector<PortBytes>& ports, const emulator::Scenario& s) {
  // The hosts a background flow starts or ends on: their ends carry its bytes, or its ACKs.
  const std::map<std::string, const emulator::Event*> flows = emulator::flow_ends(s.events);
  const std::vector<std::string> hosts(s.nodes.begin(), s.nodes.begin() + static_cast<std::ptrdiff_t>(s.rank_hosts()));
  std::uint64_t total = 0;
  for (const PortBytes& p : ports) {
    if (std::find(hosts.begin(), hosts.end(), p.node) == hosts.end()) {
      continue;  // a switch's port, or a host no rank runs on
    }
    if (!p.workload && flows.count(p.node) > 0) {
      return std::nullopt;
    }
    total += p.workload.value_or(p.bytes);
  }
  return total;
}

nlohmann::ordered_json port_bytes_json(const std::vector<PortBytes>& ports) {
  auto out = nlohmann::ordered_json::array();
  for (const PortBytes& p : ports) {
    if (p.bytes == 0) {
      continue;
    }
    nlohmann::ordered_json entry = {{"link", p.link}, {"node", p.node}, {"bytes", p.bytes}};
    if (p.workload) {
      entry["workload"] = *p.workload;
    }
    out.push_back(std::move(entry));
  }
  return out;
}

Result<std::vector<PortBytes>> read_port_bytes(const JsonReader& r) {
  if (auto ok = r.expect_array(); !ok) {
    return ok.error();
  }
  std::vector<PortBytes> out;
  for (std::size_t i = 0; i < r.json().size(); ++i) {
    const JsonReader entry = r.at(i);
    auto keys = entry.check_keys({"link", "node", "bytes", "workload"});
    auto link = entry.string("link");
    auto node = entry.string("node");
    auto bytes = entry.integer("bytes");
    auto workload = entry.optional_integer("workload");
    if (auto e = first_error(keys, link, node, bytes, workload)) {
      return *e;
    }
    if (*bytes < 0 || workload->value_or(0) < 0) {
      return entry.error("expected \"bytes\" and \"workload\" counts");
    }
    // A workload share past the whole (files written before shares were clamped to it) is all of it.
    const auto share = *workload
                           ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(std::min(**workload, *bytes)))
                           : std::nullopt;
    out.push_back(PortBytes{*link, *node, static_cast<std::uint64_t>(*bytes), share});
  }
  return out;
}

std::vector<PortBytes> median_port_bytes(const std::vector<std::vector<PortBytes>>& repetitions) {
  std::vector<PortBytes> out;  // the ends, as first seen
  for (const auto& rep : repetitions) {
    for (const PortBytes& p : rep) {
      if (std::none_of(out.begin(), out.end(),
                       [&p](const PortBytes& o) { return o.link == p.link && o.node == p.node; })) {
        out.push_back(PortBytes{p.link, p.node, 0, std::nullopt});
      }
    }
  }
  for (PortBytes& end : out) {
    std::vector<std::uint64_t> bytes;
    std::vector<std::uint64_t> workload;
    bool split = true;
    for (const auto& rep : repetitions) {
      auto it = std::find_if(rep.begin(), rep.end(),
                             [&end](const PortBytes& p) { return p.link == end.link && p.node == end.node; });
      bytes.push_back(it == rep.end() ? 0 : it->bytes);
      workload.push_back(it == rep.end() ? 0 : it->workload.value_or(0));
      split = split && (it == rep.end() || it->bytes == 0 || it->workload.has_value());
    }
    end.bytes = median_of(bytes);
    end.workload = split ? std::optional<std::uint64_t>(median_of(workload)) : std::nullopt;
  }
  return out;
}

}  // namespace contend::runner
