// Catch2's implementation, compiled once for every test executable (it is most of a test
// executable's build): each links contend_catch and calls run_catch from a main of its own, or
// links contend_catch_main for the plain main in main.cpp.
#define CATCH_CONFIG_RUNNER
#include "catch/session.h"

#include <catch2/catch.hpp>

namespace contend::test {

int run_catch(int argc, char** argv) {
  return Catch::Session().run(argc, argv);
}

}  // namespace contend::test
