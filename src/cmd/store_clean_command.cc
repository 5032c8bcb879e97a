// kvcache store clean: the tier cleanup Pod of a deleted backend with `cleanAfterDelete: true`
// (policy/tier_cleanup.h). Removes every entry inside the tier directory — never the directory
// itself, which the administrator created with its owner and mode — and writes
// `removed=N remaining=M` to the termination log (M = -1 when the directory cannot be read
// afterwards). Exits 0 when the directory is empty afterwards, 1 otherwise, so the Pod's phase
// says at a glance whether the tier is clean; the message says how far it got either way.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>

#include "kvc/cmd/commands.h"
#include "kvc/policy/store/tier_cleanup.h"

namespace kvc::cmd {
namespace {

struct CleanOptions {
  std::string path;
  std::string termination_log = "/dev/termination-log";
};

std::int64_t countEntries(const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  std::int64_t n = 0;
  for (const std::filesystem::directory_iterator end; !error && it != end; it.increment(error)) {
    ++n;
  }
  return error ? -1 : n;
}

int runClean(const CleanOptions& options) {
  const std::filesystem::path dir(options.path);
  policy::TierCleanupResult result;
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  if (error) {
    std::cerr << "kvcache store clean: --path " << options.path << ": " << error.message() << "\n";
  }
  for (const std::filesystem::directory_iterator end; !error && it != end; it.increment(error)) {
    std::error_code removed_error;
    const std::uintmax_t removed = std::filesystem::remove_all(it->path(), removed_error);
    if (removed_error) {
      std::cerr << "kvcache store clean: " << it->path().string() << ": " << removed_error.message()
                << "\n";
    } else if (removed > 0) {
      ++result.removed;
    }
  }
  result.remaining = countEntries(dir);
  const std::string line = policy::formatTierCleanup(result);
  std::cout << line << "\n";
  std::ofstream log(options.termination_log, std::ios::trunc);
  log << line;
  if (!log) {
    std::cerr << "kvcache store clean: --termination-log: cannot write " << options.termination_log
              << " (the result is still printed above)\n";
  }
  return result.remaining == 0 ? kExitOk : kExitFailure;
}

}  // namespace

void addStoreCleanCommand(CLI::App& app) {
  CLI::App* store = storeSubcommand(app);
  auto options = std::make_shared<CleanOptions>();
  CLI::App* clean = store->add_subcommand(
      "clean", "Empty a disk tier directory (the cleanup Pod of a deleted backend)");
  clean->footer(
      "Removes every entry inside --path and keeps the directory itself. Writes\n"
      "`removed=N remaining=M` to the termination log (M = -1: the directory cannot be read).\n"
      "Exit 0 when nothing remains, 1 otherwise.");
  clean->add_option("--path", options->path, "The tier directory")->required();
  clean->add_option("--termination-log", options->termination_log, "Where to write the result")
      ->capture_default_str();
  clean->callback([options] {
    if (const int code = runClean(*options); code != kExitOk) {
      throw CLI::RuntimeError(code);
    }
  });
}

}  // namespace kvc::cmd
