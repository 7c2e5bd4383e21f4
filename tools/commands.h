#pragma once
// The subcommands of `contend`, in the one registry mechanism (common/registry.h): each item's
// entry is the subcommand's name and help, its kind how it adds its options to the CLI11
// subcommand made for it (the returned function runs it once the command line is parsed). One
// line per subcommand in commands.cpp; its code is <name>_command.cpp.

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "contend/common/registry.h"

namespace contend::tools {

struct CommandKind {
  std::function<int()> (*add)(CLI::App& sub) = nullptr;
};

const Registry<CommandKind>& commands();

// Prints "contend COMMAND: MESSAGE" on stderr and returns 1: a subcommand's exit code for bad
// input or a step that failed.
int fail(const char* command, const std::string& message);

}  // namespace contend::tools
