#pragma once
// Launch-line analysis: can the arguments the webhook appends reach the declared engine?
//
// The webhook appends its flags to `args`. That is only sound when the container's command line
// visibly runs the engine's entry point, possibly behind transparent launchers (env, tini,
// dumb-init, timeout, busybox, toybox) that pass the rest of the line through. Everything else —
// a shell's -c, a script, a command line hidden in one argument, an unknown wrapper — is named
// here so the caller can refuse it, or admit it when the author declared forwarding.

#include <string>
#include <string_view>
#include <vector>

#include "kvc/policy/inject/engine.h"

namespace kvc::policy {

enum class LaunchKind {
  EngineEntry,             // the engine's own entry point: appended args reach it
  NoLaunchLine,            // neither command nor args
  ArgsWithoutCommand,      // args only: the image ENTRYPOINT is invisible
  LauncherWithoutProgram,  // e.g. `tini --` with nothing after it, or `env -S ""`
  ShellCommandString,      // sh -c / bash -lc …: an appended flag becomes $0
  HiddenCommandLine,       // env -S "…" / --split-string: the launcher splits it itself
  Script,                  // a program or script operand ending in .sh
  Unrecognised,            // a program that is neither a launcher nor the engine
  OtherEngine,             // the entry point of the other engine
};

struct LaunchAnalysis {
  LaunchKind kind = LaunchKind::Unrecognised;
  // The executable left after launcher prefixes (basename), or the script; "" when none is
  // readable (no command, or a command line hidden in one argument).
  std::string program;
  // The token that decided (the shell bundle "-lc", the launcher "tini", "env -S", the other
  // engine's name "sglang"/"vllm"); for messages.
  std::string detail;
};

// Analyses `command ++ args` for a container of `engine`.
LaunchAnalysis analyzeLaunch(const std::vector<std::string>& command,
                             const std::vector<std::string>& args, Engine engine);

// Basename of a path-like token ("/opt/venv/bin/python3" -> "python3").
std::string_view baseName(std::string_view path);

}  // namespace kvc::policy
