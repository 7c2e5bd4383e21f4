#pragma once
// Checks the schedule tests share: validity lowered and not, and the golden files.

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "contend/schedule/validation.h"

namespace contend::schedule::test {

// Fails the test unless `s` is valid both compute-only and lowered, with the same peak in-flight;
// returns that peak per rank.
inline std::vector<int> require_valid(const Schedule& s) {
  auto compute = validate(s);
  if (!compute) {
    FAIL(compute.error().message);
  }
  auto lowered = validate(lower(s));
  if (!lowered) {
    FAIL(lowered.error().message);
  }
  CHECK(compute->peak_inflight == lowered->peak_inflight);
  return compute->peak_inflight;
}

// The text of tests/golden/<name>.
inline std::string golden(const std::string& name) {
  std::ifstream in(std::string(CONTEND_GOLDEN_DIR) + "/" + name);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace contend::schedule::test
