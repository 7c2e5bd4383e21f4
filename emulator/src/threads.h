#pragma once
// Private: no exception may leave a thread. One that does calls std::terminate, which skips every
// cleanup (namespaces, state files, child processes), so each thread the emulator starts catches
// everything at its top and turns it into an Error, which the thread's owner reports as the error
// of what the thread was doing (a flow, a namespace being made, the player).

#include <exception>
#include <new>
#include <string>
#include <system_error>
#include <thread>

#include "contend/common/result.h"

namespace contend::emulator::detail {

// The exception being handled as an Error of kind kInternal: "<what>: <its message>". Call it only
// inside a catch block.
inline Error current_exception_error(const std::string& what) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return make_error(Errc::kInternal, what + ": out of memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    return make_error(Errc::kInternal, what + ": " + e.what());
  } catch (...) {
    return make_error(Errc::kInternal, what + ": an exception of unknown type");
  }
}

// Runs `fn` (returning Result<void>) on a new thread and waits for it: for calls that move the
// calling thread (setns, unshare) and must not move the caller. An exception thrown by `fn`, and a
// thread that cannot start, come back as the Error; `what` names the work in it.
template <typename Fn>
Result<void> on_helper_thread(const std::string& what, Fn&& fn) {
  Result<void> out;
  try {
    std::thread t([&] {
      try {
        out = fn();
      } catch (...) {
        out = current_exception_error(what);
      }
    });
    t.join();
  } catch (const std::system_error& e) {
    return make_error(Errc::kIo, what + ": starting a thread: " + e.what());
  }
  return out;
}

}  // namespace contend::emulator::detail
