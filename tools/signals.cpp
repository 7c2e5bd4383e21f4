#include "signals.h"

#include <signal.h>

namespace contend::tools {
namespace {
std::atomic<bool> g_stop{false};
volatile sig_atomic_t g_signal = 0;
void on_signal(int sig) {
  g_signal = sig;
  g_stop.store(true);
}
}  // namespace

const std::atomic<bool>& install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  // A closed terminal (SIGHUP) and a reader gone from a pipe (SIGPIPE, `| head`) end a run as
  // Ctrl-C does: everything it made is removed, not left behind by the default action.
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    sigaction(sig, &sa, nullptr);
  }
  return g_stop;
}

int stop_signal() {
  return g_signal;
}

}  // namespace contend::tools
