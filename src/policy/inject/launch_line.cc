#include "kvc/policy/inject/launch_line.h"

#include <algorithm>
#include <array>
#include <optional>

namespace kvc::policy {
namespace {

// A transparent launcher's option grammar (contract §7.4).
struct LauncherGrammar {
  std::string_view name;
  std::string_view short_with_operand;  // letters that take an operand
  std::array<std::string_view, 3> long_with_operand;
  std::string_view opaque_short;  // letters whose operand is a whole command line
  std::string_view opaque_long;
  int positional_operands;  // operands before the program (timeout's duration)
};

constexpr std::array<LauncherGrammar, 6> kLaunchers{{
    {"env", "uCa", {"--unset", "--chdir", "--argv0"}, "S", "--split-string", 0},
    {"tini", "pe", {}, "", "", 0},
    {"dumb-init", "r", {"--rewrite"}, "", "", 0},
    {"busybox", "", {}, "", "", 0},
    {"toybox", "", {}, "", "", 0},
    {"timeout", "sk", {"--signal", "--kill-after"}, "", "", 1},
}};

constexpr std::array<std::string_view, 6> kShells{"sh", "bash", "dash", "ash", "zsh", "ksh"};

const LauncherGrammar* launcherFor(std::string_view program) {
  for (const LauncherGrammar& launcher : kLaunchers) {
    if (launcher.name == program) {
      return &launcher;
    }
  }
  return nullptr;
}

bool isShell(std::string_view program) {
  return std::find(kShells.begin(), kShells.end(), program) != kShells.end();
}

bool isAssignment(std::string_view token) {
  const auto eq = token.find('=');
  if (eq == std::string_view::npos || eq == 0 || token.front() == '-') {
    return false;
  }
  return std::all_of(token.begin(), token.begin() + static_cast<std::ptrdiff_t>(eq), [](char c) {
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

bool blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\t'; });
}

// Where one launcher's own tokens end. Returns the index of the first token after them, or a
// finished analysis when the launcher hides the command line in one argument.
struct LauncherStep {
  std::size_t next = 0;
  std::optional<LaunchAnalysis> verdict;
};

LaunchAnalysis hidden(std::string_view launcher, std::string_view operand, std::string spelling) {
  if (blank(operand)) {
    return {LaunchKind::LauncherWithoutProgram, "", std::string(launcher)};
  }
  return {LaunchKind::HiddenCommandLine, "", std::move(spelling)};
}

LauncherStep skipLauncher(const std::vector<std::string>& argv, std::size_t at,
                          const LauncherGrammar& grammar) {
  std::size_t i = at + 1;
  const std::string launcher(grammar.name);
  while (i < argv.size()) {
    std::string_view token = argv[i];
    if (token == "--") {
      ++i;
      break;
    }
    if (token.starts_with("--")) {
      const std::string_view name = token.substr(0, token.find('='));
      const bool inline_value = name.size() != token.size();
      if (!grammar.opaque_long.empty() && name == grammar.opaque_long) {
        if (inline_value) {
          return {i, hidden(launcher, token.substr(name.size() + 1),
                            launcher + " " + std::string(name))};
        }
        const std::string_view operand = i + 1 < argv.size() ? argv[i + 1] : "";
        return {i, hidden(launcher, operand, launcher + " " + std::string(name))};
      }
      const bool takes_operand =
          std::find(grammar.long_with_operand.begin(), grammar.long_with_operand.end(), name) !=
          grammar.long_with_operand.end();
      i += (takes_operand && !inline_value) ? 2 : 1;
      continue;
    }
    if (token.size() > 1 && token.front() == '-') {
      const std::string_view bundle = token.substr(1);
      std::size_t advance = 1;
      for (std::size_t k = 0; k < bundle.size(); ++k) {
        const char letter = bundle[k];
        const bool last = k + 1 == bundle.size();
        if (grammar.opaque_short.find(letter) != std::string_view::npos) {
          const std::string spelling = launcher + " -" + std::string(1, letter);
          if (!last) {
            return {i, hidden(launcher, bundle.substr(k + 1), spelling)};
          }
          const std::string_view operand = i + 1 < argv.size() ? argv[i + 1] : "";
          return {i, hidden(launcher, operand, spelling)};
        }
        if (grammar.short_with_operand.find(letter) != std::string_view::npos) {
          advance = last ? 2 : 1;  // the operand is the next token, or the bundle's rest
          break;
        }
      }
      i += advance;
      continue;
    }
    if (token == "-") {
      ++i;  // env's "-" is -i
      continue;
    }
    break;
  }
  i += static_cast<std::size_t>(grammar.positional_operands);
  while (i < argv.size() && isAssignment(argv[i])) {
    ++i;
  }
  return {i, std::nullopt};
}

// Scans a shell's arguments: -c anywhere in a short bundle is fatal; otherwise the first operand
// is the script it runs.
LaunchAnalysis analyzeShell(const std::vector<std::string>& argv, std::size_t at) {
  const std::string shell(baseName(argv[at]));
  for (std::size_t i = at + 1; i < argv.size(); ++i) {
    std::string_view token = argv[i];
    if (token == "--") {
      if (i + 1 < argv.size()) {
        const std::string script(baseName(argv[i + 1]));
        return {script.ends_with(".sh") ? LaunchKind::Script : LaunchKind::Unrecognised, script,
                shell};
      }
      break;
    }
    if (token == "--rcfile" || token == "--init-file") {
      ++i;
      continue;
    }
    if (token.starts_with("--")) {
      continue;
    }
    if (token.size() > 1 && (token.front() == '-' || token.front() == '+')) {
      const std::string_view bundle = token.substr(1);
      if (bundle.find('c') != std::string_view::npos) {
        return {LaunchKind::ShellCommandString, shell, shell + " " + std::string(token)};
      }
      if (bundle.back() == 'o' || bundle.back() == 'O') {
        ++i;  // -o option-name
      }
      continue;
    }
    const std::string script(baseName(token));
    return {script.ends_with(".sh") ? LaunchKind::Script : LaunchKind::Unrecognised, script, shell};
  }
  return {LaunchKind::Unrecognised, shell, shell};
}

// True when argv[at] is python3 running `-m sglang.launch_server`.
bool isSGLangEntry(const std::vector<std::string>& argv, std::size_t at) {
  if (baseName(argv[at]) != "python3") {
    return false;
  }
  for (std::size_t i = at + 1; i < argv.size(); ++i) {
    std::string_view token = argv[i];
    if (token == "--check-hash-based-pycs") {
      ++i;
      continue;
    }
    if (token.starts_with("--") || token.size() < 2 || token.front() != '-') {
      return false;  // a script file, "--", or another long option ends the search
    }
    const std::string_view bundle = token.substr(1);
    for (std::size_t k = 0; k < bundle.size(); ++k) {
      const char letter = bundle[k];
      const bool last = k + 1 == bundle.size();
      if (letter == 'm') {
        const std::string_view module =
            !last ? bundle.substr(k + 1)
                  : (i + 1 < argv.size() ? std::string_view(argv[i + 1]) : std::string_view());
        return module == "sglang.launch_server";
      }
      if (letter == 'c') {
        return false;  // python3 -c "…": code, not the module
      }
      if (letter == 'W' || letter == 'X') {
        if (last) {
          ++i;
        }
        break;
      }
    }
  }
  return false;
}

}  // namespace

std::string_view baseName(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

LaunchAnalysis analyzeLaunch(const std::vector<std::string>& command,
                             const std::vector<std::string>& args, Engine engine) {
  if (command.empty()) {
    return {args.empty() ? LaunchKind::NoLaunchLine : LaunchKind::ArgsWithoutCommand, "", ""};
  }
  std::vector<std::string> argv = command;
  argv.insert(argv.end(), args.begin(), args.end());

  std::size_t at = 0;
  std::string last_launcher;
  while (at < argv.size()) {
    const LauncherGrammar* grammar = launcherFor(baseName(argv[at]));
    if (grammar == nullptr) {
      break;
    }
    last_launcher = std::string(grammar->name);
    LauncherStep step = skipLauncher(argv, at, *grammar);
    if (step.verdict) {
      return *step.verdict;
    }
    at = step.next;
  }
  if (at >= argv.size()) {
    return {LaunchKind::LauncherWithoutProgram, "", last_launcher};
  }

  const std::string program(baseName(argv[at]));
  if (isShell(program)) {
    return analyzeShell(argv, at);
  }
  if (program.ends_with(".sh")) {
    return {LaunchKind::Script, program, program};
  }
  const bool vllm_entry = program == "vllm";
  const bool sglang_entry = isSGLangEntry(argv, at);
  if (isVLLMFamily(engine)) {
    if (vllm_entry) {
      return {LaunchKind::EngineEntry, program, ""};
    }
    if (sglang_entry) {
      return {LaunchKind::OtherEngine, program, "sglang"};
    }
  } else {
    if (sglang_entry) {
      return {LaunchKind::EngineEntry, program, ""};
    }
    if (vllm_entry) {
      return {LaunchKind::OtherEngine, program, "vllm"};
    }
  }
  return {LaunchKind::Unrecognised, program, program};
}

}  // namespace kvc::policy
