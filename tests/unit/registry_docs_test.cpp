// The emulator's registries and their documentation agree: every shaping discipline and every
// timeline pattern registered has its row in docs/scenario-format.md, and every row names a
// registered one, so neither can change without the other.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>

#include "contend/emulator/discipline_registry.h"
#include "contend/emulator/pattern_registry.h"
#include "contend/emulator/scenario.h"

using namespace contend::emulator;

namespace {

// The table rows under the heading `heading` of docs/scenario-format.md, by the name in the
// first cell's backticks: "| `htb` | ... |" -> {"htb": its cells}.
std::map<std::string, std::vector<std::string>> doc_rows(const std::string& heading) {
  std::ifstream in(std::string(CONTEND_SOURCE_DIR) + "/docs/scenario-format.md");
  REQUIRE(in.good());
  std::map<std::string, std::vector<std::string>> rows;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0) {
      inside = line == heading;
      continue;
    }
    if (!inside || line.rfind("| `", 0) != 0) {
      continue;
    }
    std::vector<std::string> cells;
    std::stringstream cells_in(line.substr(1));
    for (std::string cell; std::getline(cells_in, cell, '|');) {
      cells.push_back(cell.substr(cell.find_first_not_of(' ')));
    }
    const std::string& first = cells.front();
    rows[first.substr(1, first.find('`', 1) - 1)] = cells;
  }
  return rows;
}

}  // namespace

TEST_CASE("every registered shaping discipline is documented and every documented one registered", "[registry]") {
  const auto rows = doc_rows("## Shaping disciplines (`qdisc`)");
  REQUIRE_FALSE(rows.empty());
  for (const DisciplineInfo& d : disciplines()) {
    INFO("discipline " << d.name);
    const auto row = rows.find(std::string(d.name));
    REQUIRE(row != rows.end());
    // | name | help | highest rate | preemption classes | netem |
    REQUIRE(row->second.size() >= 5);
    CHECK_THAT(row->second[1], Catch::Contains(std::string(d.help)));
    CHECK_THAT(row->second[3], Catch::StartsWith(d.preemption_classes ? "yes" : "no"));
    CHECK_THAT(row->second[4], Catch::StartsWith(d.netem ? "yes" : "no"));
  }
  for (const auto& [name, cells] : rows) {
    INFO("documented discipline " << name);
    CHECK(find_discipline(name) != nullptr);
  }
}

TEST_CASE("the default discipline is registered and tbf's highest rate is libnl's 17 Gbit", "[registry]") {
  CHECK(find_discipline(LinkSpec{}.qdisc) != nullptr);
  REQUIRE(find_discipline("tbf") != nullptr);
  CHECK(find_discipline("tbf")->max_rate_bps == 17e9);
  CHECK(find_discipline("netem") == nullptr);
}

TEST_CASE("every registered timeline pattern is documented and every documented one registered", "[registry]") {
  const auto rows = doc_rows("### Timeline patterns");
  REQUIRE_FALSE(rows.empty());
  for (const PatternInfo& p : timeline_patterns()) {
    INFO("pattern " << p.key);
    const auto row = rows.find(std::string(p.key));
    REQUIRE(row != rows.end());
    // | key | help | example | expands to |
    REQUIRE(row->second.size() >= 3);
    CHECK_THAT(row->second[1], Catch::Contains(std::string(p.help)));
    CHECK_THAT(row->second[2], Catch::Contains("\"" + std::string(p.key) + "\":"));  // its example uses it
  }
  for (const auto& [key, cells] : rows) {
    INFO("documented pattern " << key);
    const auto& all = timeline_patterns();
    CHECK(std::find_if(all.begin(), all.end(), [&](const PatternInfo& p) { return p.key == key; }) != all.end());
  }
}
