#include "port_samples.h"

#include <algorithm>

namespace contend::emulator {

std::vector<nlohmann::ordered_json> PortSamples::lines(double t_s, const std::vector<LinkSample>& samples) {
  std::map<Port, Counters> now;
  std::vector<Port> seen;  // in the samples' order
  for (const LinkSample& s : samples) {
    auto [it, fresh] = now.try_emplace(Port{s.link, s.node});
    if (fresh) {
      seen.push_back(it->first);
    }
    if (s.stats.link_level) {
      it->second.kib = s.stats.bytes / 1024;
    }
    it->second.drops += s.stats.drops;
    it->second.queued += s.stats.backlog_bytes;
  }
  std::vector<nlohmann::ordered_json> out;
  if (index_.empty()) {
    index_ = seen;
    last_.assign(index_.size(), Counters{});
    auto ports = nlohmann::ordered_json::array();
    for (const Port& p : index_) {
      ports.push_back({{"link", p.first}, {"node", p.second}});
    }
    out.push_back({{"kind", "port_index"}, {"t_s", t_s}, {"ports", ports}});
  }
  auto kib = nlohmann::ordered_json::array();
  auto drops = nlohmann::ordered_json::array();
  auto queue = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < index_.size(); ++i) {
    const auto it = now.find(index_[i]);
    const Counters c = it == now.end() ? last_[i] : it->second;  // a port gone: the shaping watch says so
    kib.push_back(c.kib - std::min(c.kib, last_[i].kib));
    drops.push_back(c.drops - std::min(c.drops, last_[i].drops));
    queue.push_back(it == now.end() ? 0 : (c.queued + 1023) / 1024);
    last_[i] = c;
  }
  out.push_back({{"kind", "ports"}, {"t_s", t_s}, {"kib", kib}, {"drops", drops}, {"queue_kib", queue}});
  return out;
}

}  // namespace contend::emulator
