#pragma once
#include <cstdint>
#include <memory>
#include <map>
#include <string>
#include <vector>

namespace kforge {
class Proposer;
class SessionStore;
} // namespace kforge

namespace kforge::cli {

using Args = std::vector<std::string>;
int searchCommand(const Args &args);
int campaignCommand(const Args &args); // every operator of a profiled workload, the budget spread by Amdahl
int evalCommand(const Args &args);
int showCommand(const Args &args);
int cardCommand(const Args &args);
int templatesCommand(const Args &args);
int checkTemplatesCommand(const Args &args);
int profileCommand(const Args &args);
int decideCommand(const Args &args); // app/cli/decide_command.cpp
int exportCommand(const Args &args); // app/cli/pack_commands.cpp
int runCommand(const Args &args);    // app/cli/pack_commands.cpp
// app/cli/llm_commands.cpp: the llm proposer's tokens and cost after `search --proposer llm:PROVIDER/MODEL`.
void printLlmTotals(const SessionStore &store, int64_t sessionId);
int profileWorkloadCommand(const Args &args); // app/cli/workload_commands.cpp
int importCommand(const Args &args);          // app/cli/workload_commands.cpp
int modelCommand(const Args &args);           // app/cli/model_commands.cpp
int fastpCommand(const Args &args);           // app/cli/model_commands.cpp
int knowledgeCommand(const Args &args);       // app/cli/knowledge_command.cpp
void printNode(const SessionStore &store, int64_t nodeId); // app/cli/node_view.cpp: show --node
int reverifyCommand(const Args &args); // app/cli/reverify_command.cpp

} // namespace kforge::cli
