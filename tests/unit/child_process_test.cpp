#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <thread>

#include "contend/common/child_process.h"
#include "contend/common/fd.h"

using namespace contend;
using namespace std::chrono_literals;

TEST_CASE("a child's exit code comes back from wait", "[child]") {
  auto t = ChildProcess::spawn({"true"});
  REQUIRE(t.ok());
  CHECK(*t->wait(5s) == 0);
  CHECK_FALSE(t->running());
  auto f = ChildProcess::spawn({"sh", "-c", "exit 7"});
  REQUIRE(f.ok());
  CHECK(*f->wait(5s) == 7);
}

TEST_CASE("a program that does not exist is kNotFound naming it", "[child]") {
  auto r = ChildProcess::spawn({"contend-no-such-program"});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Errc::kNotFound);
  CHECK_THAT(r.error().message, Catch::Contains("contend-no-such-program"));
}

TEST_CASE("wait times out on a running child and the owner ends and reaps it", "[child]") {
  pid_t pid = -1;
  {
    auto c = ChildProcess::spawn({"sleep", "30"}, ChildOptions{SIGTERM, 1000ms, {}});
    REQUIRE(c.ok());
    pid = c->pid();
    auto w = c->wait(50ms);
    REQUIRE_FALSE(w.ok());
    CHECK(w.error().code == Errc::kTimeout);
    CHECK(c->running());
  }
  // Reaped: no longer our child, so waitpid has nothing to collect.
  errno = 0;
  CHECK(::waitpid(pid, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);
}

TEST_CASE("terminate escalates to SIGKILL when the child ignores SIGTERM", "[child]") {
  auto c = ChildProcess::spawn({"sh", "-c", "trap '' TERM; exec sleep 30"}, ChildOptions{SIGTERM, 200ms, {}});
  REQUIRE(c.ok());
  // Until the shell has installed its trap and exec'd sleep (an ignored signal stays ignored
  // across exec): the child's name is "sleep" then.
  const auto exec_done = [&] {
    auto comm = read_file("/proc/" + std::to_string(c->pid()) + "/comm");
    return comm.ok() && *comm == "sleep\n";
  };
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!exec_done()) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(5ms);
  }
  const auto start = std::chrono::steady_clock::now();
  CHECK(c->terminate() == 128 + SIGKILL);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK_FALSE(c->running());
}

TEST_CASE("a child's output can go to a file, appended", "[child]") {
  const std::string path = "/tmp/contend-child-output-" + std::to_string(::getpid()) + ".log";
  ::unlink(path.c_str());
  for (const char* word : {"one", "two"}) {
    ChildOptions o;
    o.output_path = path;
    auto c = ChildProcess::spawn({"sh", "-c", std::string("echo ") + word + "; echo err >&2"}, o);
    REQUIRE(c.ok());
    CHECK(*c->wait(std::chrono::seconds(5)) == 0);
  }
  CHECK(*read_file(path) == "one\nerr\ntwo\nerr\n");
  ::unlink(path.c_str());
}
