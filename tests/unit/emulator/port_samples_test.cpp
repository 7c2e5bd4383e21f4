// A fabric's samples: every port named once, then per sample the KiB each sent and the packets it
// dropped since the previous sample, in the index's order.
#include "port_samples.h"

#include <catch2/catch.hpp>

using namespace contend::emulator;

namespace {

LinkSample sample(const std::string& link, const std::string& node, const std::string& cls, std::uint64_t bytes,
                  std::uint64_t drops, std::uint64_t backlog = 0) {
  ClassStats s;
  s.name = cls;
  s.link_level = cls == "link";
  s.bytes = bytes;
  s.drops = drops;
  s.backlog_bytes = backlog;
  return {link, node, s};
}

}  // namespace

TEST_CASE("a fabric's ports: an index once, then the KiB and drops of each since the last sample", "[player]") {
  PortSamples ports;
  const auto first =
      ports.lines(0.1, {sample("h0-leaf0", "h0", "link", 4096, 0), sample("h0-leaf0", "h0", "workload", 4096, 2),
                        sample("h0-leaf0", "leaf0", "link", 0, 0)});
  REQUIRE(first.size() == 2);
  CHECK(first[0]["kind"] == "port_index");
  CHECK(first[0]["ports"].size() == 2);
  CHECK(first[0]["ports"][1]["node"] == "leaf0");
  CHECK(first[1]["kind"] == "ports");
  CHECK(first[1]["kib"] == nlohmann::ordered_json({4, 0}));
  CHECK(first[1]["drops"] == nlohmann::ordered_json({2, 0}));
  // Whole KiB: 1.5 KiB more is 1 now and the half carries over, never lost or counted twice.
  const auto second =
      ports.lines(0.2, {sample("h0-leaf0", "leaf0", "link", 1536, 0), sample("h0-leaf0", "h0", "link", 4096 + 1536, 0),
                        sample("h0-leaf0", "h0", "workload", 0, 5)});
  REQUIRE(second.size() == 1);
  CHECK(second[0]["t_s"] == 0.2);
  CHECK(second[0]["kib"] == nlohmann::ordered_json({1, 1}));  // in the index's order, not the samples'
  CHECK(second[0]["drops"] == nlohmann::ordered_json({3, 0}));
  const auto third = ports.lines(0.3, {sample("h0-leaf0", "h0", "link", 8192, 5)});
  // 4 + 1 + 3 = the 8 KiB h0 sent; leaf0's end unseen this time: nothing more.
  CHECK(third[0]["kib"] == nlohmann::ordered_json({3, 0}));
  CHECK(third[0]["drops"] == nlohmann::ordered_json({0, 0}));
}

TEST_CASE("a fabric's ports: the KiB each port's queues hold at the sample, rounded up", "[player]") {
  PortSamples ports;
  // h0's end: its two leaf classes hold 1 KiB and 1 byte (2 KiB, rounded up); leaf0's end is empty.
  const auto first =
      ports.lines(0.1, {sample("h0-leaf0", "h0", "link", 0, 0), sample("h0-leaf0", "h0", "workload", 0, 0, 1024),
                        sample("h0-leaf0", "h0", "background", 0, 0, 1), sample("h0-leaf0", "leaf0", "link", 0, 0)});
  REQUIRE(first.size() == 2);
  CHECK(first[1]["queue_kib"] == nlohmann::ordered_json({2, 0}));
  // A level, not a count since the last sample: drained, it reads 0; filled, what it holds.
  const auto second = ports.lines(
      0.2, {sample("h0-leaf0", "h0", "workload", 0, 0, 0), sample("h0-leaf0", "leaf0", "link", 0, 0, 64 * 1024)});
  CHECK(second[0]["queue_kib"] == nlohmann::ordered_json({0, 64}));
  // Holding the same 64 KiB at the next sample reads 64 again (a count since the last would read 0).
  const auto third = ports.lines(
      0.3, {sample("h0-leaf0", "h0", "workload", 0, 0, 0), sample("h0-leaf0", "leaf0", "link", 0, 0, 64 * 1024)});
  CHECK(third[0]["queue_kib"] == nlohmann::ordered_json({0, 64}));
  // A port missing from a sample holds nothing there (its queue is not carried over).
  const auto fourth = ports.lines(0.4, {sample("h0-leaf0", "h0", "workload", 0, 0, 0)});
  CHECK(fourth[0]["queue_kib"] == nlohmann::ordered_json({0, 0}));
}
