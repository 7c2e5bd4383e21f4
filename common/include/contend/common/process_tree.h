#pragma once
// The processes below one process, from /proc's parent links, and ending them: what a guard that
// owns a whole tree (a user's job's rank: a launcher, its workers, their helpers) needs. A guard
// that is a child subreaper (PR_SET_CHILD_SUBREAPER) adopts every orphan of its tree, so nothing
// started below it escapes the walk but a process that moves to another subreaper. Only
// processes found below `root` are signalled. Thread-safe (reads /proc; signals by PID).

#include <sys/types.h>

#include <chrono>
#include <vector>

namespace contend {

// Every process below `root` (its children, theirs, ...), parents before children; empty when
// /proc cannot be read.
std::vector<pid_t> descendants(pid_t root);

// Ends every process below `root`: SIGTERM to each, then SIGKILL to any still there after
// `grace`, walking the tree again each time (a process may fork while it is being ended) until
// none is left or 2 s have passed.
// Children of the caller among them are reaped. Returns how many processes were signalled.
int end_descendants(pid_t root, std::chrono::milliseconds grace);

// Reaps the caller's children that have ended (orphans a subreaper adopted among them).
void reap_ended_children();

}  // namespace contend
