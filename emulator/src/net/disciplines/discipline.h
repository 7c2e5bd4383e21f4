#pragma once
// Private: what every shaping discipline implements, and its line in the registry
// (disciplines/registry.cpp). A discipline builds and changes the qdisc tree of one link end's
// egress; the Shaper owns the tree (and removes it). One object per shaped end, used from one
// thread.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "net/tc.h"
#include "contend/emulator/net/discipline_registry.h"
#include "contend/emulator/scenario/scenario.h"

namespace contend::emulator {

class Discipline {
 public:
  virtual ~Discipline() = default;
  // Adds a root qdisc at `rate_bps`, failing without a change when the interface has one, then
  // the rest of the tree; when a later step fails, removes the root again.
  virtual Result<void> install(const detail::TcTarget& tc, double rate_bps) = 0;
  // Changes the rate in place (never delete and re-add: that lets bursts through); in force when
  // it returns.
  virtual Result<void> set_rate(const detail::TcTarget& tc, double rate_bps) = 0;
  // Counters and configured rate of the tree's classes; the whole link's entry has link_level.
  virtual Result<std::vector<ClassStats>> stats(const detail::TcTarget& tc) const = 0;
};

// Makes the discipline for one end of `link`, whose background traffic leaves from
// `background_src` (an IPv4 address; "" when the tree is only attached to, not installed).
using DisciplineFactory = std::unique_ptr<Discipline> (*)(const LinkSpec& link, const std::string& background_src);

struct DisciplineEntry {
  DisciplineInfo info;
  DisciplineFactory make;
};

// The registry's entry for `name`, or nullptr.
const DisciplineEntry* find_discipline_entry(std::string_view name);

}  // namespace contend::emulator
