#pragma once
#include <string>
#include <vector>

namespace kforge::cli {

using Args = std::vector<std::string>;
int searchCommand(const Args &args);
int evalCommand(const Args &args);
int showCommand(const Args &args);
int cardCommand(const Args &args);
int templatesCommand(const Args &args);
int checkTemplatesCommand(const Args &args);
int profileCommand(const Args &args);
int decideCommand(const Args &args); // app/cli/decide_command.cpp
int profileWorkloadCommand(const Args &args); // app/cli/workload_commands.cpp
int importCommand(const Args &args);          // app/cli/workload_commands.cpp

} // namespace kforge::cli
