// The plain test main: Catch2's own command line.
#include "catch/session.h"

int main(int argc, char** argv) {
  return contend::test::run_catch(argc, argv);
}
