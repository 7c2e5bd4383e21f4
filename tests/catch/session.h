#pragma once
// Catch2's session over a test executable's arguments (its exit status), for a main of its own:
// Catch2's implementation, Catch::Session included, is compiled once, in session.cpp.

namespace contend::test {

int run_catch(int argc, char** argv);

}  // namespace contend::test
