// kvcache store survey: the `local-disk-survey` init container of a member with a disk tier.
// Counts what is already in the tier directory (and, as a control, in `/`) and writes
// `entries=N control=M` to the termination log, which the controller reads back for
// TierWasEmpty. Always exits 0: an unreadable directory is a finding (-1), not a crash, so the
// member's own start reports what is wrong with it.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>

#include "kvc/cmd/commands.h"
#include "kvc/policy/store/tier_survey.h"

namespace kvc::cmd {
namespace {

struct SurveyOptions {
  std::string path;
  std::string termination_log = "/dev/termination-log";
  std::string root = "/";
};

std::int64_t countEntries(const std::string& dir) {
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  if (error) {
    return -1;
  }
  std::int64_t n = 0;
  for (const std::filesystem::directory_iterator end; it != end; it.increment(error)) {
    if (error) {
      return -1;
    }
    ++n;
  }
  return error ? -1 : n;
}

void runSurvey(const SurveyOptions& options) {
  const policy::TierSurvey survey{countEntries(options.path), countEntries(options.root)};
  const std::string line = policy::formatTierSurvey(survey);
  std::cout << line << "\n";
  std::ofstream log(options.termination_log, std::ios::trunc);
  log << line;
  if (!log) {
    std::cerr << "kvcache store survey: --termination-log: cannot write " << options.termination_log
              << " (the survey is still printed above)\n";
  }
}

}  // namespace

void addStoreSurveyCommand(CLI::App& app) {
  CLI::App* store = storeSubcommand(app);
  auto options = std::make_shared<SurveyOptions>();
  CLI::App* survey = store->add_subcommand(
      "survey", "Count what a disk tier directory already holds (a member's init container)");
  survey->footer(
      "Writes `entries=N control=M` to the termination log: N entries in --path, M in the\n"
      "control directory (`/`), -1 for one that cannot be read. Always exits 0.");
  survey->add_option("--path", options->path, "The tier directory")->required();
  survey->add_option("--termination-log", options->termination_log, "Where to write the result")
      ->capture_default_str();
  survey->add_option("--control", options->root, "The control directory")->capture_default_str();
  survey->callback([options] { runSurvey(*options); });
}

}  // namespace kvc::cmd
