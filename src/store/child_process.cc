#include "kvc/store/child_process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>
#include <thread>

extern char** environ;

namespace kvc::store {
namespace {

int exitCodeOf(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

}  // namespace

Result<ChildProcess> ChildProcess::start(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env) {
  if (argv.empty()) {
    return Status(StatusCode::InvalidArgument, "no command to run");
  }
  std::vector<char*> args;
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  // The environment: the supervisor's, each name in `env` replaced (built before fork: no
  // allocation after it).
  std::vector<std::string> overridden;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string_view name = text.substr(0, text.find('='));
    bool replaced = false;
    for (const std::string& e : env) {
      replaced = replaced || std::string_view(e).substr(0, e.find('=')) == name;
    }
    if (!replaced) {
      overridden.emplace_back(text);
    }
  }
  overridden.insert(overridden.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& entry : overridden) {
    envp.push_back(entry.data());
  }
  envp.push_back(nullptr);
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) {
    return Status(StatusCode::Internal, std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t pid = fork();
  if (pid < 0) {
    close(ready[0]);
    close(ready[1]);
    return Status(StatusCode::Internal, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec. The child dies with its supervisor: a
    // master that outlived a killed launcher would keep serving beside the next leader.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The supervisor blocks SIGTERM/SIGINT to wait for them; the store process must not.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    execvpe(args[0], args.data(), envp.data());
    const int error = errno;
    ssize_t written = write(ready[1], &error, sizeof error);
    static_cast<void>(written);
    _exit(127);
  }
  close(ready[1]);
  int error = 0;
  const ssize_t got = read(ready[0], &error, sizeof error);  // EOF: exec succeeded
  close(ready[0]);
  if (got == static_cast<ssize_t>(sizeof error)) {
    waitpid(pid, nullptr, 0);
    return Status(StatusCode::NotFound, "cannot start " + argv[0] + ": " + std::strerror(error));
  }
  return ChildProcess(pid);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), exit_code_(other.exit_code_) {
  other.pid_ = -1;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0 && !exit_code_) {
      stop(std::chrono::seconds(1));
    }
    pid_ = other.pid_;
    exit_code_ = other.exit_code_;
    other.pid_ = -1;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exit_code_) {
    stop(std::chrono::seconds(1));
  }
}

std::optional<int> ChildProcess::poll() {
  if (exit_code_ || pid_ <= 0) {
    return exit_code_;
  }
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done == pid_) {
    exit_code_ = exitCodeOf(status);
  } else if (done < 0 && errno == ECHILD) {
    exit_code_ = 1;  // reaped elsewhere: gone all the same
  }
  return exit_code_;
}

std::optional<int> ChildProcess::runUntil(std::stop_token stop, std::chrono::milliseconds grace) {
  while (!stop.stop_requested()) {
    if (auto code = poll()) {
      return code;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  this->stop(grace);
  return std::nullopt;
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  if (poll()) {
    return *exit_code_;
  }
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (poll()) {
      return *exit_code_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  exit_code_ = exitCodeOf(status);
  return *exit_code_;
}

}  // namespace kvc::store
