#pragma once
// A user's own job as an experiment's workload (docs/own-job.md): a command line per rank from a
// template, run in each node's namespace, its throughput read from its own output (job_output.h).
// The matrix's second axis is a list of named variants (arguments or environment) in place of
// schedules. Pure: parsing, placeholders and each rank's environment; running is job_cell.h's.
// Plain values; thread-safe.

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "contend/common/json_reader.h"
#include "contend/common/result.h"
#include "contend/runner/experiment/job_output.h"

namespace contend::runner {

using EnvList = std::vector<std::pair<std::string, std::string>>;  // NAME, VALUE, in order

// One entry of "variants": {"name": "bucket-25", "args": ["--bucket-cap-mb", "25"], "env": {...}}.
struct JobVariant {
  std::string name;
  std::vector<std::string> args;  // appended to the command; placeholders expanded
  EnvList env;                    // on top of the job's
};

struct CommandJob {
  std::vector<std::string> command;   // argv template: "{rank}", "{master_addr}", ... (below)
  EnvList env;                        // on top of the rank's environment (rank_environment)
  OutputSpec output;                  // how its throughput is read
  int ranks = 0;                      // one per node; 0 until the scenarios say
  int output_rank = 0;                // whose output is parsed
  int warmup = 1;                     // steps of that rank left out (without a measure window)
  int steps = 1;                      // at least this many measured steps, or the cell fails
  std::chrono::seconds timeout{600};  // a cell running longer fails, every rank's processes ended
  int port = 29400;                   // MASTER_PORT, and {master_port}
  // What the ranks' hosts must send over the links per step, at least, for a cell of more than one
  // rank to be published ("min_link_bytes_per_step"; 0: a job that does not use the network):
  // less means its data took a path around them (docs/own-job.md#paths-around-the-links).
  std::uint64_t min_link_bytes_per_step = 64 * 1024;
  // Each rank's working directory (rank_workdir): a folder, absolute, or a template of
  // placeholders ("{out}/rank{rank}"), fresh for each rank and cell, that contend creates.
  std::string workdir;
  std::string folder;  // the experiment file's folder, absolute: {experiment_dir}
  // "launch": "rank-0": only rank 0's command runs, a launcher (mpirun through scripts/netns-rsh)
  // that starts the other ranks in their namespaces itself, below rank 0's guard.
  bool launch_rank0_only = false;
  std::vector<JobVariant> variants;
};

// Where a rank runs, what its placeholders and environment are made of.
struct RankPlace {
  int rank = 0;
  int world = 1;
  std::string node;                    // the scenario's node name
  std::string address;                 // the node's address on its first link ("198.18.0.1")
  std::string ifname;                  // that link's interface in the node's namespace
  std::vector<std::string> addresses;  // every rank's address, in rank order
  std::vector<std::string> nodes;      // every rank's node name, in rank order
  std::string out;                     // a folder of the cell's for the job's own files
  // What Open MPI's btl/oob_tcp_if_include get: the links' workload subnet on one host (the
  // switch's and the background addresses outside it), the interface on cluster hosts.
  std::string mpi_networks = "198.18.0.0/17";
};

// The placeholders a template may use, for help and errors: "{rank}", "{world_size}", ...
const std::vector<std::string>& placeholder_names();

// Whether the job's command, its variants' arguments or any environment value names `placeholder`
// ("{out}").
bool uses_placeholder(const CommandJob& job, const std::string& placeholder);

// `text` with every placeholder replaced ("{{" and "}}" are literal braces). kInvalidArgument
// naming the placeholder and the known ones for an unknown name or an unclosed brace.
Result<std::string> expand_placeholders(const std::string& text, const RankPlace& place, const CommandJob& job);

// Whether the job's workdir is a template (it names a placeholder): then it is made for each rank
// and cell, else it is one folder that must exist.
bool workdir_is_template(const CommandJob& job);
// Rank `place.rank`'s working directory: the workdir, expanded when a template.
Result<std::string> rank_workdir(const CommandJob& job, const RankPlace& place);

// Rank `place.rank`'s command line for `variant`: the command then the variant's arguments,
// expanded.
Result<std::vector<std::string>> rank_command(const CommandJob& job, const JobVariant& variant, const RankPlace& place);

// The environment of a rank: what torchrun and MPI jobs expect (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), what gloo, NCCL and Open MPI need to use the node's
// link and not loopback (GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME, OMPI_MCA_btl_tcp_if_include,
// OMPI_MCA_oob_tcp_if_include), what keeps them off the paths around the links between namespaces
// of one machine (OMPI_MCA_pml=ob1 and OMPI_MCA_btl=tcp,self: no shared memory, no UCX;
// pipeline::nccl_isolation_environment with the node's name as NCCL_HOSTID), PYTHONUNBUFFERED=1 (a line is timed when
// it is written, not when a buffer fills), CONTEND_NODE; then the job's "env" and the variant's, expanded.
// "NAME=VALUE".
Result<std::vector<std::string>> rank_environment(const CommandJob& job, const JobVariant& variant,
                                                  const RankPlace& place);

// The workload object of a command experiment ("command" present), checked strictly, with
// `variants` (the experiment's "variants" array). `workdir` is the experiment file's folder.
Result<CommandJob> parse_command_job(const JsonReader& workload, const JsonReader& variants,
                                     const std::string& workdir);

}  // namespace contend::runner
