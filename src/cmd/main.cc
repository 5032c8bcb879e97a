// kvcache: the operator, its store supervisors and its user tools in one binary.
#include <CLI/CLI.hpp>

#include <iostream>

#include "kvc/cmd/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "kvcache — a shared Mooncake KV-cache for LLM-serving Kubernetes clusters.\n"
      "Preview and explain Pod injection offline, inspect the store, run the operator.",
      "kvcache"};
  app.set_version_flag("--version", "kvcache 0.1.0");
  app.require_subcommand(1);
  app.fallthrough(false);
  kvc::cmd::addInjectCommand(app);
  kvc::cmd::addCheckInjectCommand(app);
  kvc::cmd::addProbeCommand(app);
  kvc::cmd::addStatusCommand(app);
  kvc::cmd::addDiagnoseCommand(app);
  kvc::cmd::addOperatorCommand(app);
  kvc::cmd::addStoreCommand(app);
  kvc::cmd::addStoreSurveyCommand(app);
  kvc::cmd::addStoreCleanCommand(app);
  kvc::cmd::addStoreLeaderCommand(app);
  kvc::cmd::addStoreMemberCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    // Usage errors are bad input (exit 2); --help and --version exit 0.
    return code == 0 ? 0 : kvc::cmd::kExitBadInput;
  }
  return 0;
}
