#include <catch2/catch.hpp>
#include <cerrno>

#include "contend/common/result.h"

using namespace contend;

namespace {
Result<int> half(int v) {
  if (v % 2 != 0) {
    return make_error(Errc::kInvalidArgument, "odd: " + std::to_string(v));
  }
  return v / 2;
}
}  // namespace

TEST_CASE("a Result holds either the value or the error", "[result]") {
  auto ok = half(8);
  REQUIRE(ok.ok());
  CHECK(*ok == 4);
  auto bad = half(3);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == Errc::kInvalidArgument);
  CHECK(bad.error().message == "odd: 3");
  Result<void> done;
  CHECK(done.ok());
  Result<void> failed = make_error(Errc::kIo, "disk");
  CHECK_FALSE(failed.ok());
  CHECK(failed.error().message == "disk");
}

TEST_CASE("errno values map to error kinds in one place", "[result]") {
  CHECK(errno_error(EPERM, "x").code == Errc::kPermission);
  CHECK(errno_error(EACCES, "x").code == Errc::kPermission);
  CHECK(errno_error(ENOENT, "x").code == Errc::kNotFound);
  CHECK(errno_error(ETIMEDOUT, "x").code == Errc::kTimeout);
  CHECK(errno_error(EOPNOTSUPP, "x").code == Errc::kUnsupported);
  CHECK(errno_error(EIO, "x").code == Errc::kIo);
  const Error e = errno_error(EPERM, "rtnl_class_add(c1-c2 htb 1:10)");
  CHECK(e.message == "rtnl_class_add(c1-c2 htb 1:10): Operation not permitted");
  CHECK(with_context(e, "shaper").message == "shaper: rtnl_class_add(c1-c2 htb 1:10): Operation not permitted");
  CHECK(std::string(errc_name(Errc::kDeadlock)) == "deadlock");
}
