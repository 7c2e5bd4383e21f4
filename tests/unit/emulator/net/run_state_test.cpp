#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "contend/common/fd.h"
#include "contend/emulator/net/netns.h"
#include "contend/emulator/net/run_state.h"
#include "contend/emulator/net/teardown.h"
#include "contend/emulator/net/topology.h"

using namespace contend;
using namespace contend::emulator;

namespace {
// A state folder of its own for the test's lifetime.
struct StateDir {
  std::string path = "/tmp/contend-run-state-test-" + std::to_string(::getpid());
  StateDir() { ::setenv("CONTEND_STATE_DIR", path.c_str(), 1); }
  ~StateDir() {
    (void)std::system(("rm -rf " + path).c_str());
    ::unsetenv("CONTEND_STATE_DIR");
  }
};
}  // namespace

TEST_CASE("tearing a run down removes its state, and only namespaces that exist count", "[run_state]") {
  StateDir dir;
  const std::vector<std::string> gone = {"contend-nosuchrun.a", "contend-nosuchrun"};
  REQUIRE(write_run_state({"nosuchrun", "/tmp/s.json", gone}).ok());
  REQUIRE(list_runs() == std::vector<std::string>{"nosuchrun"});
  auto removed = tear_down_run("nosuchrun");
  REQUIRE(removed.ok());
  CHECK(removed->namespaces == 0);
  CHECK(removed->processes == 0);
  CHECK(list_runs().empty());
  auto state = read_run_state("nosuchrun");
  REQUIRE(state.ok());
  CHECK_FALSE(state->has_value());
  // Without a state file (killed before it wrote one), the planned namespaces are what it removes.
  auto again = tear_down_run("nosuchrun", gone);
  REQUIRE(again.ok());
  CHECK(again->namespaces == 0);
  CHECK(remove_namespaces({}).value() == 0);
}

TEST_CASE("a hosts file goes with its run also when its namespace is already gone", "[run_state]") {
  if (::geteuid() != 0) {
    WARN("skipped: writing /etc/netns needs root");
    return;
  }
  const std::string name = "contend-nosuchrun" + std::to_string(::getpid()) + ".a";
  REQUIRE(write_netns_hosts(name, "198.18.0.1\ta\n").ok());
  REQUIRE(::access((netns_etc_dir(name) + "/hosts").c_str(), F_OK) == 0);
  REQUIRE_FALSE(netns_exists(name));
  CHECK(remove_namespaces({name}).value() == 0);
  CHECK(::access(netns_etc_dir(name).c_str(), F_OK) != 0);
}

TEST_CASE("a run's state is recorded once: a second record of a run that is up is refused", "[run_state]") {
  StateDir dir;
  REQUIRE(write_run_state({"once", "/tmp/s.json", {"contend-once.a", "contend-once"}}).ok());
  auto again = write_run_state({"once", "/tmp/other.json", {}});
  REQUIRE_FALSE(again.ok());
  CHECK_THAT(again.error().message, Catch::Contains("run once is up already"));
  CHECK((*read_run_state("once"))->scenario == "/tmp/s.json");  // untouched
  CHECK(list_runs() == std::vector<std::string>{"once"});       // no temporary file left
  REQUIRE(tear_down_run("once").ok());
}

TEST_CASE("a damaged state file is removed by tearing its run down, which says it was damaged", "[run_state]") {
  StateDir dir;
  REQUIRE(write_run_state({"broken", "/tmp/s.json", {}}).ok());
  REQUIRE(
      contend::write_file_atomic(dir.path + "/broken.json", "{\"schema\": \"contend.emu-state/1\", \"run\": 3").ok());
  REQUIRE_FALSE(read_run_state("broken").ok());
  auto torn = tear_down_run("broken");
  REQUIRE(torn.ok());
  CHECK_THAT(torn->damaged_state, Catch::Contains("broken.json"));
  CHECK(list_runs().empty());
}
