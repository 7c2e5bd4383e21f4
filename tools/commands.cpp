#include "commands.h"

#include <cstdio>

#include "ab_command.h"
#include "compare_command.h"
#include "dpdk_command.h"
#include "emu_command.h"
#include "flows_command.h"
#include "history_command.h"
#include "job_rank_command.h"
#include "list_command.h"
#include "report_command.h"
#include "run_command.h"
#include "sim_command.h"
#include "worker_command.h"

namespace contend::tools {

// One line per subcommand, in the order `contend --help` lists them.
// clang-format off
const Registry<CommandKind>& commands() {
  static const Registry<CommandKind> kTable("command", {
      {{"", "run",
        "Run an experiment: every scenario x schedule x repetition, then a summary", {}},
       CommandKind{add_run_command}},
      {{"", "compare",
        "The regression verdict of one run against another: per cell, the ratio with its interval "
        "and a Mann-Whitney test of the repetitions; exit 3 on a loss that matters", {}},
       CommandKind{add_compare_command}},
      {{"", "ab",
        "An A/B comparison of two builds (or experiments) run alternately on this machine, round by "
        "round, each round a pair (paired t, Holm over the cells); exit 3 on a loss that matters", {}},
       CommandKind{add_ab_command}},
      {{"", "history",
        "The series of many runs of one experiment on one machine, per cell, with its change points "
        "and the commit where each began; exit 3 when the latest is a loss", {}},
       CommandKind{add_history_command}},
      {{"", "report",
        "Draw the figures and index.html of a `contend run` results directory", {}},
       CommandKind{add_report_command}},
      {{"", "sim",
        "Simulate pipeline schedules (no root, no network): makespan, throughput, bubble and "
        "memory, side by side", {}},
       CommandKind{add_sim_command}},
      {{"", "emu",
        "The emulated network of a scenario on this host: namespaces, veth links shaped with "
        "tc (HTB/TBF over netlink), and the scenario player", {}},
       CommandKind{add_emu_command}},
      {{"", "flows",
        "Run background TCP/UDP flows (a contend.flow-job/1 file) between the nodes of a run "
        "that is up, through the scenario player; log what they achieve every 100 ms", {}},
       CommandKind{add_flows_command}},
      {{"", "dpdk-source",
        "Send UDP frames with DPDK (net_af_packet, no NIC, no hugepages) from one node of a "
        "run to another, through the link's tc shaping", {}},
       CommandKind{add_dpdk_command}},
      {{"", "worker",
        "Run one pipeline stage over TCP or NCCL (one process per stage)", {}},
       CommandKind{add_worker_command}},
      {{"", "job-rank",
        "Run one rank of a user's job as `contend run` does: its output timestamped into a rank "
        "log, its whole process tree ended with it", {}},
       CommandKind{add_job_rank_command}},
      {{"", "list",
        "List what this build registers: schedules, policies, compute backends, transports, "
        "shaping disciplines, timeline patterns, event kinds, output parsers and subcommands, with their parameters "
        "(docs/extending.md adds more)", {}},
       CommandKind{add_list_command}},
  });
  return kTable;
}
// clang-format on

int fail(const char* command, const std::string& message) {
  std::fprintf(stderr, "contend %s: %s\n", command, message.c_str());
  return 1;
}

}  // namespace contend::tools
