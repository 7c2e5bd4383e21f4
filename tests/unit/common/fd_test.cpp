#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "contend/common/fd.h"

using namespace contend;

namespace {
std::string temp_dir() {
  char tmpl[] = "/tmp/contend-fd-test-XXXXXX";
  const char* dir = ::mkdtemp(tmpl);
  REQUIRE(dir != nullptr);
  return dir;
}
}  // namespace

TEST_CASE("Fd closes its descriptor when it goes out of scope", "[fd]") {
  int raw = -1;
  {
    auto p = Fd::pipe();
    REQUIRE(p.ok());
    raw = p->first.get();
    CHECK(::fcntl(raw, F_GETFD) & FD_CLOEXEC);
  }
  CHECK(::fcntl(raw, F_GETFD) == -1);
}

TEST_CASE("Fd moves ownership and release gives it up", "[fd]") {
  auto p = Fd::pipe();
  REQUIRE(p.ok());
  Fd a = std::move(p->first);
  CHECK_FALSE(p->first.valid());
  CHECK(a.valid());
  const int raw = a.release();
  CHECK_FALSE(a.valid());
  CHECK(::fcntl(raw, F_GETFD) != -1);
  ::close(raw);
}

TEST_CASE("write_file_atomic and read_file round-trip, errors name the path", "[fd]") {
  const std::string dir = temp_dir();
  const std::string path = dir + "/a.txt";
  REQUIRE(write_file_atomic(path, "hello\nworld\n").ok());
  REQUIRE(write_file_atomic(path, "replaced\n").ok());
  auto text = read_file(path);
  REQUIRE(text.ok());
  CHECK(*text == "replaced\n");
  auto missing = read_file(dir + "/missing.txt");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == Errc::kNotFound);
  CHECK_THAT(missing.error().message, Catch::Contains(dir + "/missing.txt"));
  auto nodir = write_file_atomic(dir + "/no/such/dir.txt", "x");
  REQUIRE_FALSE(nodir.ok());
  CHECK_THAT(nodir.error().message, Catch::Contains("no/such/dir.txt"));
  // A device is not read at all: /dev/zero would fill the limit before being refused.
  auto device = read_file("/dev/zero");
  REQUIRE_FALSE(device.ok());
  CHECK_THAT(device.error().message, Catch::Contains("/dev/zero: a device, not a file"));
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}
