#pragma once
// One store process (mooncake_master, mc_store_rest_server) run under a `kvcache store`
// supervisor: started from an argv, found on PATH, sharing the supervisor's stdout/stderr (so
// `kubectl logs` shows both), and stopped the way the kubelet stops a container — SIGTERM, then
// SIGKILL after a grace period. It is killed with its supervisor (PR_SET_PDEATHSIG): the supervisor
// must keep the thread that started it alive while it runs.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "kvc/common/status.h"

namespace kvc::store {

class ChildProcess {
public:
  // InvalidArgument for an empty argv; NotFound naming the program when it cannot be started.
  // `env` entries ("NAME=value") are set in the child's environment over the supervisor's.
  static Result<ChildProcess> start(const std::vector<std::string>& argv,
                                    const std::vector<std::string>& env = {});

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();  // stops a process still running (1 s grace)

  pid_t pid() const { return pid_; }
  // The exit code once it has exited (128 + signal for a signal), without blocking.
  std::optional<int> poll();
  // SIGTERM, then SIGKILL if it has not exited after `grace`; returns the exit code.
  int stop(std::chrono::milliseconds grace);
  // Waits until it exits (returns its exit code) or `stop` is requested (stops it with `grace`
  // and returns nullopt).
  std::optional<int> runUntil(std::stop_token stop, std::chrono::milliseconds grace);

private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

}  // namespace kvc::store
