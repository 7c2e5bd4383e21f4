#pragma once
// SIGINT, SIGTERM, SIGHUP (a closed terminal) and SIGPIPE (a closed pipe) set a flag that
// long-running subcommands poll, so they can clean up (remove namespaces, reap children) instead
// of dying mid-way.

#include <atomic>

namespace contend::tools {

// Installs the handlers (without SA_RESTART) and returns the flag they set.
const std::atomic<bool>& install_stop_handlers();
// The signal that set the flag (0 if none): exit code 128 + it.
int stop_signal();

}  // namespace contend::tools
