#include <catch2/catch.hpp>

#include <sched.h>

#include <filesystem>
#include <string>

#include "contend/common/keep_awake.h"

using namespace contend;

namespace {
// This process's threads running at SCHED_IDLE.
int idle_threads() {
  int n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    if (::sched_getscheduler(std::stoi(task.path().filename().string())) == SCHED_IDLE) {
      ++n;
    }
  }
  return n;
}
}  // namespace

TEST_CASE("keeping the CPUs awake: a thread per CPU at the lowest priority, all gone when it ends",
          "[unit][keep_awake]") {
  cpu_set_t allowed;
  REQUIRE(::sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  REQUIRE(idle_threads() == 0);
  {
    auto awake = KeepAwake::start();
    REQUIRE(awake.ok());
    CHECK((*awake)->threads() == static_cast<std::size_t>(CPU_COUNT(&allowed)));
    CHECK(idle_threads() == CPU_COUNT(&allowed));
  }
  CHECK(idle_threads() == 0);
}
