#include <catch2/catch.hpp>
#include <map>

#include "contend/schedule/csv.h"
#include "contend/schedule/generators.h"
#include "contend/schedule/registry.h"
#include "contend/schedule/validation.h"
#include "schedule_checks.h"

using namespace contend;
using namespace contend::schedule;
using test::golden;

namespace {
void check_round_trip(const Schedule& s, CsvLayout layout) {
  auto text = to_csv(s, layout);
  REQUIRE(text.ok());
  auto back = from_csv(*text, s.name);
  REQUIRE(back.ok());
  CHECK(*back == s);
}
}  // namespace

TEST_CASE("CSV round-trips every generator, aligned, compact and lowered", "[csv]") {
  for (const char* spec : {"1f1b", "gpipe", "kfkb:k=2", "kfkb:k=3", "interleaved:v=2", "interleaved:v=3"}) {
    for (int p : {1, 2, 3, 4, 8}) {
      for (int m : {7, 24, 48}) {
        INFO(spec << " p=" << p << " m=" << m);
        auto made = make_schedule(spec, p, m);
        // Interleaved needs m % p == 0 (24 and 48 give it for every p here); the rest take any shape.
        const bool interleaved = std::string(spec).rfind("interleaved", 0) == 0;
        REQUIRE(made.ok() == (!interleaved || m % p == 0));
        if (!made) {
          CHECK_THAT(made.error().message, Catch::Contains("multiple of the number of ranks"));
          continue;
        }
        const Schedule s = *made;
        check_round_trip(s, CsvLayout::kAligned);
        check_round_trip(s, CsvLayout::kCompact);
        check_round_trip(lower(s), CsvLayout::kAligned);
      }
    }
  }
}

TEST_CASE("CSV matches the golden files", "[csv]") {
  CHECK(*to_csv(one_f_one_b(4, 8)) == golden("1f1b_p4_m8.csv"));
  CHECK(*to_csv(kfkb(3, 7, 3)) == golden("kfkb_k3_p3_m7.csv"));
  CHECK(*to_csv(gpipe(3, 4)) == golden("gpipe_p3_m4.csv"));
  CHECK(*to_csv(*interleaved_1f1b(2, 4, 2)) == golden("interleaved_v2_p2_m4.csv"));
  CHECK(*to_csv(lower(one_f_one_b(2, 3))) == golden("1f1b_p2_m3_lowered.csv"));
}

TEST_CASE("CSV reading accepts CRLF and spaces and skips idle cells", "[csv]") {
  auto s = from_csv("0F0, ,0B0\r\n,1F0,1B0\r\n", "x.csv");
  REQUIRE(s.ok());
  CHECK(s->num_ranks == 2);
  CHECK(s->num_stages == 2);
  CHECK(s->num_microbatches == 1);
  CHECK(s->ranks[0] == std::vector<Action>{{0, Op::kForward, 0}, {0, Op::kBackward, 0}});
}

TEST_CASE("CSV errors name the file, row and column", "[csv]") {
  auto bad = from_csv("0F0,0B0\n1F0,1Q0\n", "x.csv");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Catch::StartsWith("x.csv: row 2, column 2: ") && Catch::Contains("\"1Q0\""));
  CHECK_THAT(from_csv("\n,,\n", "y.csv").error().message, Catch::Contains("y.csv: no actions"));
}

TEST_CASE("an aligned CSV of a deadlocked schedule is an error, not a truncated file", "[csv]") {
  Schedule s = gpipe(2, 1);
  s.ranks[0] = {{0, Op::kBackward, 0}, {0, Op::kForward, 0}};
  auto r = to_csv(s);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::kDeadlock);
}

TEST_CASE("CSV round-trips I and W and a V placement, inferred from where each stage's actions are", "[csv]") {
  // Rank 0 holds stages 0 and 3, rank 1 stages 1 and 2: the V.
  const char* text =
      "0F0,1F0,,,\n"  // bad on purpose: stage 1 on rank 0 and rank 1
      "1F0\n";
  auto two = from_csv(text, "two.csv");
  REQUIRE_FALSE(two.ok());
  CHECK(two.error().message ==
        "two.csv: stage 1 has actions on rank 0 (row 1, column 2) and on rank 1 (row 2, column 1 (1F0)); a stage "
        "runs on one rank");

  auto v = from_csv("0F0,3F0,3I0,3W0,0I0,0W0\n1F0,2F0,2I0,2W0,1I0,1W0\n", "v.csv");
  REQUIRE(v.ok());
  CHECK(v->num_stages == 4);
  CHECK(v->placement == v_placement(2));
  CHECK(v->ranks[0][2] == Action{3, Op::kBackwardInput, 0});
  CHECK(validate(*v).ok());
  check_round_trip(*v, CsvLayout::kAligned);
  check_round_trip(lower(*v), CsvLayout::kCompact);
  // Looped placement is the default and stays implicit, so generated schedules compare equal.
  CHECK(from_csv("0F0,0B0\n1F0,1B0\n", "l.csv")->placement.empty());
}

TEST_CASE("a stage no rank runs is named", "[csv]") {
  // Three stages on two ranks read, and validation says what is wrong with them.
  auto odd = from_csv("0F0,0B0,2F0,2B0\n1F0,1B0\n", "odd.csv");
  REQUIRE(odd.ok());
  CHECK_THAT(validate(*odd).error().message, Catch::Contains("3 stages is not a positive multiple of 2 ranks"));
  CHECK(from_csv("0F0,0B0,3F0,3B0\n1F0,1B0\n", "gap.csv").error().message ==
        "gap.csv: stage 2 has no actions on any rank (stages run 0..3)");
}

TEST_CASE("PyTorch's OVERLAP_F_B cells read as their actions in order, both in one column", "[csv]") {
  auto t = read_csv_table("0F0,0F1,(0F2;0B0)OVERLAP_F_B,0B1,0B2\n", "o.csv");
  REQUIRE(t.ok());
  const std::vector<Action> expected = {{0, Op::kForward, 0},  {0, Op::kForward, 1},  {0, Op::kForward, 2},
                                        {0, Op::kBackward, 0}, {0, Op::kBackward, 1}, {0, Op::kBackward, 2}};
  CHECK(t->schedule.ranks[0] == expected);
  CHECK(t->columns[0] == std::vector<int>{1, 2, 3, 3, 4, 5});
  CHECK_THAT(from_csv("(0F0;0B0)OVERLAP\n", "o.csv").error().message,
             Catch::StartsWith("o.csv: row 1, column 1: ") && Catch::Contains("OVERLAP_F_B"));
  CHECK_THAT(from_csv("0F0,(0F1;0X0)OVERLAP_F_B\n", "o.csv").error().message,
             Catch::StartsWith("o.csv: row 1, column 2: ") && Catch::Contains("\"0X0\""));
}

namespace {
// PyTorch's _dump_csv of Interleaved1F1B on 2 ranks, 2 chunks, 4 micro-batches, written by hand
// from the algorithm: idle cells where PyTorch pads (warm-up, waiting for the first backward,
// cool-down).
const char* kInterleavedCsv =
    "0F0,0F1,2F0,2F1,,,0F2,2B0,0F3,2B1,2F2,0B0,2F3,0B1,,2B2,,2B3,,0B2,,0B3\r\n"
    ",1F0,1F1,,3F0,3B0,3F1,3B1,1F2,1B0,1F3,1B1,3F2,3B2,3F3,3B3,,1B2,,1B3\r\n";

// A reader that knows the files of a test, and nothing else.
FileReader files(std::map<std::string, std::string> contents) {
  return [contents = std::move(contents)](const std::string& path) -> Result<std::string> {
    auto it = contents.find(path);
    if (it == contents.end()) {
      return make_error(Errc::kNotFound, path + ": No such file or directory");
    }
    return it->second;
  };
}
}  // namespace

TEST_CASE("a hand-written PyTorch CSV of interleaved 1F1B loads through csv:PATH as the built-in schedule",
          "[csv][registry]") {
  auto s = make_schedule("csv:interleaved.csv", 2, 4, files({{"interleaved.csv", kInterleavedCsv}}));
  REQUIRE(s.ok());
  CHECK(s->name == "csv:interleaved.csv");
  const Schedule built = *make_schedule("interleaved:v=2", 2, 4);
  CHECK(s->ranks == built.ranks);
  CHECK(s->num_stages == built.num_stages);
  CHECK(s->placement == built.placement);
  CHECK(validate(*s)->peak_inflight == validate(built)->peak_inflight);
}

TEST_CASE("csv:PATH takes sends and receives when the file has them, and checks them", "[csv][registry]") {
  const Schedule lowered = lower(*make_schedule("zbv", 2, 3));
  const std::string text = *to_csv(lowered, CsvLayout::kCompact);
  auto s = make_schedule("csv:l.csv", 2, 3, files({{"l.csv", text}}));
  REQUIRE(s.ok());
  CHECK(s->ranks == lowered.ranks);
  CHECK(lower(*s) == *s);
  std::string no_recv = text;
  no_recv.erase(no_recv.find("1RECV_F0,"), 9);
  CHECK_THAT(make_schedule("csv:l.csv", 2, 3, files({{"l.csv", no_recv}})).error().message,
             Catch::Contains("rank 1 lacks 1RECV_F0"));
}

TEST_CASE("csv:PATH errors name the file, the rank, the column and the action", "[csv][registry]") {
  const auto err = [](const std::string& text, int p = 2, int m = 4) {
    return make_schedule("csv:x.csv", p, m, files({{"x.csv", text}})).error().message;
  };
  CHECK_THAT(err(kInterleavedCsv, 4, 8),
             Catch::Contains("x.csv: the file schedules 2 ranks and 4 micro-batches, the run has 4 ranks and 8"));
  std::string swapped = kInterleavedCsv;  // rank 1 runs 3B0 before 3F0
  swapped.replace(swapped.find(",3F0,3B0,"), 9, ",3B0,3F0,");
  CHECK_THAT(err(swapped), Catch::StartsWith("schedule \"csv:x.csv\": x.csv: rank 1, column 5 (3B0): backward"));
  std::string crossed = kInterleavedCsv;  // rank 1 wants 1B0 (after rank 0's 2B0) before its 3B0
  crossed.replace(crossed.find(",3F0,3B0,3F1,3B1,1F2,1B0,"), 25, ",3F0,1B0,3F1,3B1,1F2,3B0,");
  CHECK_THAT(err(crossed), Catch::Contains("deadlock: rank 0, column 8 (2B0) waits for 3B0 on rank 1; rank 1, "
                                           "column 6 (1B0) waits for 2B0 on rank 0"));
  CHECK_THAT(err("0F0,0Q0\n"), Catch::Contains("x.csv: row 1, column 2: "));
  CHECK_THAT(make_schedule("csv:gone.csv", 2, 4, files({})).error().message,
             Catch::Contains("gone.csv: No such file or directory"));
}
