#pragma once
// Shared plumbing of the kube/runtime integration tests against the real control plane of
// test/cluster (etcd, kube-apiserver, kcm, scheduler, kwok on 127.0.0.1).
//
//   main() (harness.cc)   KVC_SKIP_INTEGRATION=1 prints a SKIPPED line and exits 77 (ctest's
//                         SKIP_RETURN_CODE); nothing else skips: a missing cluster fails.
//   ClusterEnv            the `export K='V'` lines of $KVC_CLUSTER_DIR/env
//   TestNamespace         a fresh namespace, deleted when the test ends
//   Process               a child process (posix_spawn) with its output in a file, stopped by
//                         its pid
//   DedicatedCluster      a private cluster (test/cluster/cluster.sh up DIR) for destructive
//                         tests, stopped and purged at the end; it can restart its apiserver

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kvc/kube/client.h"

namespace kvc::it {

struct ClusterEnv {
  std::string dir;
  std::map<std::string, std::string> vars;

  std::string get(const std::string& name) const;
  // Reads DIR/env; fails the test (not skips) when it is missing.
  static ClusterEnv load(const std::string& dir);
  // From $KVC_CLUSTER_DIR.
  static ClusterEnv fromEnvironment();
};

// An admin client from the cluster's kubeconfig.
kube::ClientPtr adminClient(const ClusterEnv& env);

// Polls `condition` every `period` until it holds or `limit` passes.
bool waitFor(const std::function<bool()>& condition, std::chrono::milliseconds limit,
             std::chrono::milliseconds period = std::chrono::milliseconds(50));

// A unique DNS label: "<prefix>-<6 random hex>".
std::string uniqueName(const std::string& prefix);

class TestNamespace {
public:
  TestNamespace(kube::ClientPtr client, const std::string& prefix);
  ~TestNamespace();
  const std::string& name() const { return name_; }

private:
  kube::ClientPtr client_;
  std::string name_;
};

class Process {
public:
  // Starts argv[0] (a path) with `extra_env` added; stdout and stderr go to `log_path`.
  Process(std::vector<std::string> argv, const std::string& log_path,
          const std::map<std::string, std::string>& extra_env = {});
  ~Process();  // SIGKILL if still running, then reaps

  int pid() const { return pid_; }
  bool running();
  void signal(int sig);
  // Waits for exit; the exit code, 128+signal, or nullopt on timeout.
  std::optional<int> wait(std::chrono::milliseconds limit);
  std::string log() const;

private:
  int pid_ = -1;
  std::optional<int> status_;
  std::string log_path_;
};

// Runs a command to completion; returns its exit code and combined output.
std::pair<int, std::string> run(const std::vector<std::string>& argv,
                                std::chrono::milliseconds limit = std::chrono::seconds(120),
                                const std::map<std::string, std::string>& extra_env = {});

class DedicatedCluster {
public:
  // Brings up a cluster in `dir` with test/cluster/cluster.sh (fails the test on error).
  explicit DedicatedCluster(const std::string& dir);
  ~DedicatedCluster();  // cluster.sh down DIR --purge

  const ClusterEnv& env() const { return env_; }
  // Stops kube-apiserver (SIGTERM, or SIGKILL when `kill`), waits for it to exit, starts it
  // again with the same command line and waits for /readyz. Returns the seconds it was away.
  double restartApiserver(bool kill = false);
  // Compacts etcd at its current revision; returns that revision.
  std::int64_t compactEtcd();

private:
  std::string dir_;
  ClusterEnv env_;
  bool up_ = false;
};

std::string sourceDir();
std::string kvcacheBinary();
std::string buildDir();

}  // namespace kvc::it
