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

namespace {
// Polls `condition` every 5 ms for up to 5 s.
template <typename Condition>
bool eventually(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) {
      return true;
    }
    std::this_thread::sleep_for(5ms);
  }
  return condition();
}

// The program name of `pid` ("" when it is gone or a zombie).
std::string command_of(pid_t pid) {
  auto text = read_file("/proc/" + std::to_string(pid) + "/comm");
  if (!text || text->empty()) {
    return "";
  }
  auto state = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (state && state->find(") Z") != std::string::npos) {
    return "";
  }
  return text->substr(0, text->find('\n'));
}
}  // namespace

TEST_CASE("a child's exit code comes back from wait", "[child]") {
  auto t = ChildProcess::spawn({"true"});
  REQUIRE(t.ok());
  CHECK(*t->wait(5s) == 0);
  CHECK_FALSE(t->running());
  auto f = ChildProcess::spawn({"sh", "-c", "exit 7"});
  REQUIRE(f.ok());
  CHECK(*f->wait(5s) == 7);
}

TEST_CASE("a child gets the environment it is given on top of this one's, never on its command line", "[child]") {
  ::setenv("CONTEND_TEST_KEPT", "kept", 1);
  ::setenv("CONTEND_TEST_REPLACED", "old", 1);
  ChildOptions o;
  o.environment = {"CONTEND_TEST_REPLACED=new", "CONTEND_TEST_ADDED=added"};
  auto c = ChildProcess::spawn(
      {"sh", "-c", "[ \"$CONTEND_TEST_KEPT/$CONTEND_TEST_REPLACED/$CONTEND_TEST_ADDED\" = kept/new/added ]"}, o);
  REQUIRE(c.ok());
  CHECK(*c->wait(5s) == 0);
  ::unsetenv("CONTEND_TEST_KEPT");
  ::unsetenv("CONTEND_TEST_REPLACED");
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
    auto c = ChildProcess::spawn({"sleep", "30"}, ChildOptions{SIGTERM, 1000ms, {}, true, {}});
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
  auto c = ChildProcess::spawn({"sh", "-c", "trap '' TERM; exec sleep 30"}, ChildOptions{SIGTERM, 200ms, {}, true, {}});
  REQUIRE(c.ok());
  // Until the shell has installed its trap and exec'd sleep (an ignored signal stays ignored).
  REQUIRE(eventually([&] { return command_of(c->pid()) == "sleep"; }));
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

TEST_CASE("a child dies with the process that started it, also when that one is killed outright", "[child]") {
  // A stand-in runner: a forked copy of this process spawns `sleep 30`, reports its pid, then
  // waits to be SIGKILLed (no destructor runs).
  auto report = Fd::pipe();
  REQUIRE(report.ok());
  const pid_t runner = ::fork();
  REQUIRE(runner >= 0);
  if (runner == 0) {
    auto c = ChildProcess::spawn({"sleep", "30"});
    const pid_t pid = c ? c->pid() : -1;
    (void)!::write(report->second.get(), &pid, sizeof pid);
    ::pause();
    ::_exit(0);
  }
  report->second.reset();
  pid_t sleeper = -1;
  REQUIRE(::read(report->first.get(), &sleeper, sizeof sleeper) == static_cast<ssize_t>(sizeof sleeper));
  REQUIRE(sleeper > 0);
  CHECK(command_of(sleeper) == "sleep");
  ::kill(runner, SIGKILL);
  ::waitpid(runner, nullptr, 0);
  // The orphan is reparented and reaped by init once the signal has ended it.
  CHECK(eventually([&] { return command_of(sleeper).empty(); }));
}
