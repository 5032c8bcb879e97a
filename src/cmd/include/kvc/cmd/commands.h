#pragma once
// The subcommands of the `kvcache` binary. Each add*Command registers one subcommand on the
// root app; its callback throws CLI::RuntimeError(code) for a non-zero exit code.

#include <CLI/CLI.hpp>

namespace kvc::cmd {

// Exit codes shared by the commands (DESIGN.md §5).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // infrastructure: the cluster or store could not be read
inline constexpr int kExitBadInput = 2;  // unreadable file, unparseable document, bad flags
inline constexpr int kExitRefused = 3;   // a document was refused

void addInjectCommand(CLI::App& app);
void addCheckInjectCommand(CLI::App& app);
void addProbeCommand(CLI::App& app);        // probe: the reuse probe
void addStatusCommand(CLI::App& app);       // status: the tree of backends, pools, Bindings
void addDiagnoseCommand(CLI::App& app);     // diagnose: the Troubleshooting table walked
void addStoreCommand(CLI::App& app);        // store status
void addStoreSurveyCommand(CLI::App& app);  // store survey
void addStoreCleanCommand(CLI::App& app);   // store clean
void addStoreLeaderCommand(CLI::App& app);  // store leader
void addStoreMemberCommand(CLI::App& app);  // store member

// The `store` group the store subcommands register on (created by the first to ask).
CLI::App* storeSubcommand(CLI::App& app);
void addOperatorCommand(CLI::App& app);

}  // namespace kvc::cmd
