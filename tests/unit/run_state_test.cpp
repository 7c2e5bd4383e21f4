#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "contend/emulator/run_state.h"
#include "contend/emulator/topology.h"

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
  CHECK(*removed == 0);
  CHECK(list_runs().empty());
  auto state = read_run_state("nosuchrun");
  REQUIRE(state.ok());
  CHECK_FALSE(state->has_value());
  // Without a state file (killed before it wrote one), the planned namespaces are what it removes.
  auto again = tear_down_run("nosuchrun", gone);
  REQUIRE(again.ok());
  CHECK(*again == 0);
  CHECK(remove_namespaces({}).value() == 0);
}
