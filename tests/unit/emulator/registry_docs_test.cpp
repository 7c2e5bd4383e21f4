// The registries and their documentation agree: every shaping discipline, timeline pattern,
// traffic pattern and fabric kind registered has its row in docs/scenario-format.md, every output
// parser its row in docs/own-job.md, and every row names a registered one, so neither can change
// without the other.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "contend/common/units.h"
#include "contend/emulator/net/discipline_registry.h"
#include "contend/emulator/scenario/fabric_registry.h"
#include "contend/emulator/scenario/pattern_registry.h"
#include "contend/emulator/scenario/scenario.h"
#include "contend/emulator/scenario/traffic_registry.h"
#include "contend/runner/experiment/job_output.h"

using namespace contend::emulator;

namespace {

// The table rows under the heading `heading` of `doc` (docs/scenario-format.md), by the name in
// the first cell's backticks: "| `htb` | ... |" -> {"htb": its cells}.
std::map<std::string, std::vector<std::string>> doc_rows(const std::string& doc, const std::string& heading) {
  std::ifstream in(std::string(CONTEND_SOURCE_DIR) + "/" + doc);
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

using Row = std::vector<std::string>;

// The rows under `heading` of `doc` and the registry agree: each of `registered` has a row, which
// `check_row` (name, its cells) checks further, and each row names one of `registered`.
template <typename Items, typename Name, typename CheckRow>
void check_agreement(const std::string& doc, const std::string& heading, const Items& registered, Name name,
                     CheckRow check_row) {
  const auto rows = doc_rows(doc, heading);
  REQUIRE_FALSE(rows.empty());
  std::set<std::string> names;
  for (const auto& info : registered) {
    names.insert(std::string(name(info)));
    INFO("registered " << name(info) << ", documented under " << heading);
    const auto row = rows.find(std::string(name(info)));
    REQUIRE(row != rows.end());
    check_row(info, row->second);
  }
  for (const auto& [documented, cells] : rows) {
    INFO("documented " << documented << " under " << heading);
    CHECK(names.count(documented) == 1);
  }
}

}  // namespace

TEST_CASE("every registered shaping discipline is documented and every documented one registered", "[registry]") {
  check_agreement(
      "docs/scenario-format.md", "## Shaping disciplines (`qdisc`)", disciplines().items(),
      [](const DisciplineItem& d) { return d.entry.name; },
      [](const DisciplineItem& item, const Row& cells) {
        // | name | help | lowest rate | highest rate | preemption classes | netem |
        const DisciplineKind& d = item.kind;
        REQUIRE(cells.size() >= 6);
        CHECK_THAT(cells[1], Catch::Contains(item.entry.help));
        CHECK_THAT(cells[2], Catch::StartsWith(contend::format_rate(d.min_rate_bps)));
        CHECK_THAT(cells[3], Catch::StartsWith(contend::format_rate(d.max_rate_bps)));
        CHECK_THAT(cells[4], Catch::StartsWith(d.preemption_classes ? "yes" : "no"));
        CHECK_THAT(cells[5], Catch::StartsWith(d.netem ? "yes" : "no"));
      });
}

TEST_CASE("the default discipline is registered and tbf's highest rate is libnl's 17 Gbit", "[registry]") {
  CHECK(find_discipline(LinkSpec{}.qdisc) != nullptr);
  REQUIRE(find_discipline("tbf") != nullptr);
  CHECK(find_discipline("tbf")->kind.max_rate_bps == 17e9);
  CHECK(find_discipline("netem") == nullptr);
}

TEST_CASE("every registered timeline pattern is documented and every documented one registered", "[registry]") {
  check_agreement(
      "docs/scenario-format.md", "### Timeline patterns", timeline_patterns().items(),
      [](const PatternItem& p) { return p.entry.name; },
      [](const PatternItem& p, const Row& cells) {
        // | key | help | example | expands to |
        REQUIRE(cells.size() >= 3);
        CHECK_THAT(cells[1], Catch::Contains(p.entry.help));
        CHECK_THAT(cells[2], Catch::Contains("\"" + p.entry.name + "\":"));  // its example uses it
      });
}

TEST_CASE("every registered fabric kind is documented and every documented one registered", "[registry]") {
  check_agreement(
      "docs/scenario-format.md", "## Fabrics", fabric_kinds().items(), [](const FabricItem& f) { return f.entry.name; },
      [](const FabricItem& f, const Row& cells) {
        // | kind | what it builds | parameters |
        REQUIRE(cells.size() >= 3);
        CHECK_THAT(cells[1], Catch::Contains(f.entry.help));
      });
}

TEST_CASE("every registered traffic pattern is documented and every documented one registered", "[registry]") {
  check_agreement(
      "docs/scenario-format.md", "### Traffic patterns", traffic_patterns().items(),
      [](const TrafficItem& t) { return t.entry.name; },
      [](const TrafficItem& t, const Row& cells) {
        // | pattern | its flows |
        REQUIRE(cells.size() >= 2);
        CHECK_THAT(cells[1], Catch::Contains(t.entry.help));
      });
}

TEST_CASE("every registered output parser is documented and every documented one registered", "[registry]") {
  using contend::runner::OutputParserKind;
  using Item = contend::Registry<OutputParserKind>::Item;
  check_agreement(
      "docs/own-job.md", "## Output parsers", contend::runner::output_parsers().items(),
      [](const Item& p) { return p.entry.name; },
      [](const Item& p, const Row& cells) {
        // | parser | what it reads | keys besides parser and unit | unit when unit is absent |
        REQUIRE(cells.size() >= 4);
        CHECK_THAT(cells[1], Catch::Contains(p.entry.help));
        if (p.entry.params.empty()) {
          CHECK_THAT(cells[2], Catch::StartsWith("none"));
        }
        for (const contend::ParamDef& param : p.entry.params) {
          CHECK_THAT(cells[2], Catch::Contains("`" + param.key + "`"));
        }
        CHECK_THAT(cells[3], Catch::StartsWith(p.kind.unit));
      });
}
