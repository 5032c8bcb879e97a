// The launcher grammar of contract §7.4, as a table of command lines.
#include "kvc/policy/inject/launch_line.h"

#include <gtest/gtest.h>

namespace kvc::policy {
namespace {

using Tokens = std::vector<std::string>;

struct Case {
  const char* name;
  Tokens command;
  Tokens args;
  Engine engine;
  LaunchKind kind;
  std::string program;
};

const Case kCases[] = {
    {"vllm directly", {"vllm"}, {"serve", "--model", "x"}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"vllm by path", {"/usr/local/bin/vllm", "serve"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"vllm-ascend uses vllm", {"vllm"}, {"serve"}, Engine::VLLMAscend, LaunchKind::EngineEntry, "vllm"},
    {"sglang module", {"python3", "-m", "sglang.launch_server"}, {}, Engine::SGLang, LaunchKind::EngineEntry, "python3"},
    {"sglang venv python", {"/opt/venv/bin/python3"}, {"-m", "sglang.launch_server"}, Engine::SGLang, LaunchKind::EngineEntry, "python3"},
    {"sglang -u -m", {"python3", "-u", "-msglang.launch_server"}, {}, Engine::SGLang, LaunchKind::EngineEntry, "python3"},
    {"sglang -X opt", {"python3", "-X", "dev", "-m", "sglang.launch_server"}, {}, Engine::SGLang, LaunchKind::EngineEntry, "python3"},
    {"plain python", {"python", "-m", "sglang.launch_server"}, {}, Engine::SGLang, LaunchKind::Unrecognised, "python"},
    {"python3 other module", {"python3", "-m", "vllm.entrypoints.openai.api_server"}, {}, Engine::VLLM, LaunchKind::Unrecognised, "python3"},
    {"python3 -c", {"python3", "-c", "import sglang"}, {}, Engine::SGLang, LaunchKind::Unrecognised, "python3"},
    // Transparent launchers.
    {"tini --", {"tini", "--"}, {"vllm", "serve"}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"tini -e 143", {"tini", "-e", "143", "--", "vllm"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"tini -se bundle", {"tini", "-se", "143", "vllm"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"tini -- empty", {"tini", "--"}, {}, Engine::VLLM, LaunchKind::LauncherWithoutProgram, ""},
    {"env assignments", {"env", "A=1", "B=2", "vllm"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"env -u NAME", {"env", "-u", "HOME", "-i", "vllm"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"env -uHOME", {"env", "-uHOME", "vllm"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"env -iu bundle", {"env", "-iu", "HOME", "vllm"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"env --chdir=/x", {"env", "--chdir=/x", "--unset", "HOME", "vllm"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"env -- A=1", {"env", "--", "A=1", "vllm"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"env -S hidden", {"env", "-S", "vllm serve"}, {}, Engine::VLLM, LaunchKind::HiddenCommandLine, ""},
    {"env -Sstring", {"env", "-Svllm serve"}, {}, Engine::VLLM, LaunchKind::HiddenCommandLine, ""},
    {"env -vS bundle", {"env", "-vS", "vllm serve"}, {}, Engine::VLLM, LaunchKind::HiddenCommandLine, ""},
    {"env --split-string=", {"env", "--split-string=vllm serve"}, {}, Engine::VLLM, LaunchKind::HiddenCommandLine, ""},
    {"env --split-string x", {"env", "--split-string", "vllm serve"}, {}, Engine::VLLM, LaunchKind::HiddenCommandLine, ""},
    {"env -S empty", {"env", "-S", ""}, {}, Engine::VLLM, LaunchKind::LauncherWithoutProgram, ""},
    {"env alone", {"env"}, {}, Engine::VLLM, LaunchKind::LauncherWithoutProgram, ""},
    {"dumb-init", {"dumb-init", "--rewrite", "15:2", "--", "vllm"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"dumb-init -r", {"dumb-init", "-r", "15:2", "-c", "vllm"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"timeout duration", {"timeout", "10m", "vllm"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"timeout -s -k", {"timeout", "-s", "KILL", "-k", "5", "1h", "vllm"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"timeout --signal=", {"timeout", "--signal=TERM", "--preserve-status", "1h", "vllm"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"timeout no program", {"timeout", "10m"}, {}, Engine::VLLM, LaunchKind::LauncherWithoutProgram, ""},
    {"busybox env", {"busybox", "env", "A=1", "vllm"}, {}, Engine::VLLM, LaunchKind::EngineEntry, "vllm"},
    {"nested launchers", {"tini", "--", "env", "A=1", "timeout", "1h", "python3"}, {"-m", "sglang.launch_server"}, Engine::SGLang, LaunchKind::EngineEntry, "python3"},
    // Shells.
    {"sh -c", {"sh", "-c", "vllm serve"}, {}, Engine::VLLM, LaunchKind::ShellCommandString, "sh"},
    {"bash -lc", {"bash", "-lc", "vllm serve"}, {}, Engine::VLLM, LaunchKind::ShellCommandString, "bash"},
    {"bash -euc", {"/bin/bash", "-euc", "vllm serve"}, {}, Engine::VLLM, LaunchKind::ShellCommandString, "bash"},
    {"bash -o pipefail -c", {"bash", "-o", "pipefail", "-c", "x"}, {}, Engine::VLLM, LaunchKind::ShellCommandString, "bash"},
    {"busybox sh -c", {"busybox", "sh", "-c", "x"}, {}, Engine::VLLM, LaunchKind::ShellCommandString, "sh"},
    {"sh script.sh", {"sh", "/app/run.sh"}, {}, Engine::VLLM, LaunchKind::Script, "run.sh"},
    {"bash --rcfile x script", {"bash", "--rcfile", "/x", "-e", "/app/start.sh"}, {}, Engine::VLLM, LaunchKind::Script, "start.sh"},
    {"bash -- script", {"bash", "--", "-weird.sh"}, {}, Engine::VLLM, LaunchKind::Script, "-weird.sh"},
    {"bash non-sh script", {"bash", "/app/start"}, {}, Engine::VLLM, LaunchKind::Unrecognised, "start"},
    {"bash alone", {"bash"}, {}, Engine::VLLM, LaunchKind::Unrecognised, "bash"},
    {"zsh -c", {"zsh", "-c", "x"}, {}, Engine::SGLang, LaunchKind::ShellCommandString, "zsh"},
    // Scripts and unknown wrappers.
    {"./run.sh", {"./run.sh"}, {"--model", "x"}, Engine::VLLM, LaunchKind::Script, "run.sh"},
    {"entrypoint", {"entrypoint"}, {}, Engine::VLLM, LaunchKind::Unrecognised, "entrypoint"},
    {"/app/entrypoint.sh", {"/app/entrypoint.sh"}, {}, Engine::VLLM, LaunchKind::Script, "entrypoint.sh"},
    {"gosu not stripped", {"gosu", "app", "vllm"}, {}, Engine::VLLM, LaunchKind::Unrecognised, "gosu"},
    {"setsid not stripped", {"setsid", "vllm"}, {}, Engine::VLLM, LaunchKind::Unrecognised, "setsid"},
    {"su-exec not stripped", {"su-exec", "app", "vllm"}, {}, Engine::VLLM, LaunchKind::Unrecognised, "su-exec"},
    {"chroot not stripped", {"chroot", "/", "vllm"}, {}, Engine::VLLM, LaunchKind::Unrecognised, "chroot"},
    // The other engine.
    {"sglang on vllm", {"python3", "-m", "sglang.launch_server"}, {}, Engine::VLLM, LaunchKind::OtherEngine, "python3"},
    {"vllm on sglang", {"vllm", "serve"}, {}, Engine::SGLang, LaunchKind::OtherEngine, "vllm"},
    // No command.
    {"nothing", {}, {}, Engine::VLLM, LaunchKind::NoLaunchLine, ""},
    {"args only", {}, {"serve"}, Engine::VLLM, LaunchKind::ArgsWithoutCommand, ""},
};

// Test names carry the case's name; the parameter itself prints as that name too.
void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

class LaunchLine : public testing::TestWithParam<Case> {};

TEST_P(LaunchLine, Classifies) {
  const Case& c = GetParam();
  const LaunchAnalysis analysis = analyzeLaunch(c.command, c.args, c.engine);
  EXPECT_EQ(analysis.kind, c.kind);
  EXPECT_EQ(analysis.program, c.program);
}

INSTANTIATE_TEST_SUITE_P(Table, LaunchLine, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& param) {
                           std::string name;
                           for (const char* p = param.param.name; *p != '\0'; ++p) {
                             name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
                           }
                           return name;
                         });

TEST(LaunchLineDetail, NamesTheDecidingToken) {
  EXPECT_EQ(analyzeLaunch({"bash", "-lc", "x"}, {}, Engine::VLLM).detail, "bash -lc");
  EXPECT_EQ(analyzeLaunch({"env", "-S", "x"}, {}, Engine::VLLM).detail, "env -S");
  EXPECT_EQ(analyzeLaunch({"env", "--split-string=x"}, {}, Engine::VLLM).detail,
            "env --split-string");
  EXPECT_EQ(analyzeLaunch({"tini", "--"}, {}, Engine::VLLM).detail, "tini");
  EXPECT_EQ(analyzeLaunch({"python3", "-m", "sglang.launch_server"}, {}, Engine::VLLM).detail,
            "sglang");
}

}  // namespace
}  // namespace kvc::policy
