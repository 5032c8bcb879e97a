#include "kvc/policy/launch_line.h"

#include <algorithm>
#include <array>
#include <optional>

namespace kvc::policy {
namespace {

// A transparent launcher's option grammar (contract §7.4).
struct LauncherGrammar {
  std::string_view name;
  std::string_view shortWithOperand;  // letters that take an operand
  std::array<std::string_view, 3> longWithOperand;
  std::string_view opaqueShort;  // letters whose operand is a whole command line
  std::string_view opaqueLong;
  int positionalOperands;  // operands before the program (timeout's duration)
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
      const bool inlineValue = name.size() != token.size();
      if (!grammar.opaqueLong.empty() && name == grammar.opaqueLong) {
        if (inlineValue) {
          return {i, hidden(launcher, token.substr(name.size() + 1), launcher + " " +
                                                                         std::string(name))};
        }
        const std::string_view operand = i + 1 < argv.size() ? argv[i + 1] : "";
        return {i, hidden(launcher, operand, launcher + " " + std::string(name))};
      }
      const bool takesOperand = std::find(grammar.longWithOperand.begin(),
                                          grammar.longWithOperand.end(),
                                          name) != grammar.longWithOperand.end();
      i += (takesOperand && !inlineValue) ? 2 : 1;
      continue;
    }
    if (token.size() > 1 && token.front() == '-') {
      const std::string_view bundle = token.substr(1);
      std::size_t advance = 1;
      for (std::size_t k = 0; k < bundle.size(); ++k) {
        const char letter = bundle[k];
        const bool last = k + 1 == bundle.size();
        if (grammar.opaqueShort.find(letter) != std::string_view::npos) {
          const std::string spelling = launcher + " -" + std::string(1, letter);
          if (!last) {
            return {i, hidden(launcher, bundle.substr(k + 1), spelling)};
          }
          const std::string_view operand = i + 1 < argv.size() ? argv[i + 1] : "";
          return {i, hidden(launcher, operand, spelling)};
        }
        if (grammar.shortWithOperand.find(letter) != std::string_view::npos) {
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
  i += static_cast<std::size_t>(grammar.positionalOperands);
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
    return {script.ends_with(".sh") ? LaunchKind::Script : LaunchKind::Unrecognised, script,
            shell};
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
            !last ? bundle.substr(k + 1) : (i + 1 < argv.size() ? std::string_view(argv[i + 1])
                                                                : std::string_view());
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
  std::string lastLauncher;
  while (at < argv.size()) {
    const LauncherGrammar* grammar = launcherFor(baseName(argv[at]));
    if (grammar == nullptr) {
      break;
    }
    lastLauncher = std::string(grammar->name);
    LauncherStep step = skipLauncher(argv, at, *grammar);
    if (step.verdict) {
      return *step.verdict;
    }
    at = step.next;
  }
  if (at >= argv.size()) {
    return {LaunchKind::LauncherWithoutProgram, "", lastLauncher};
  }

  const std::string program(baseName(argv[at]));
  if (isShell(program)) {
    return analyzeShell(argv, at);
  }
  if (program.ends_with(".sh")) {
    return {LaunchKind::Script, program, program};
  }
  const bool vllmEntry = program == "vllm";
  const bool sglangEntry = isSGLangEntry(argv, at);
  if (isVLLMFamily(engine)) {
    if (vllmEntry) {
      return {LaunchKind::EngineEntry, program, ""};
    }
    if (sglangEntry) {
      return {LaunchKind::OtherEngine, program, "sglang"};
    }
  } else {
    if (sglangEntry) {
      return {LaunchKind::EngineEntry, program, ""};
    }
    if (vllmEntry) {
      return {LaunchKind::OtherEngine, program, "vllm"};
    }
  }
  return {LaunchKind::Unrecognised, program, program};
}

}  // namespace kvc::policy
