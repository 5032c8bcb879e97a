// `kvcache operator` processes against the real control plane: a controller's status written
// once per generation through the status subresource, probes and metrics, graceful shutdown,
// and Lease failover measured after SIGKILL.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <numeric>
#include <regex>
#include <sstream>

#include "harness.h"

#include "kvc/kube/object.h"
#include "kvc/kube/time.h"

namespace kvc::it {
namespace {

namespace fs = std::filesystem;
using kube::Api;

// A pool naming a backend that does not exist: the pool controller reports it (BackendResolved
// False/BackendNotFound, phase Error) and needs no store to do so.
Json orphanPool(const std::string& name, const std::string& total) {
  return Json{{"apiVersion", "worker.gpustack.ai/v1"},
              {"kind", "KVCachePool"},
              {"metadata", {{"name", name}}},
              {"spec", {{"backends", {name + "-missing"}}, {"quota", {{"total", total}}}}}};
}

// One `kvcache operator` process with its log and its probe/metrics addresses.
class Operator {
public:
  Operator(const ClusterEnv& env, const std::string& namespace_name, const std::string& identity,
           const std::vector<std::string>& extra = {})
      : identity_(identity),
        log_path_((fs::temp_directory_path() / uniqueName("kvc-it-" + identity)).string() +
                  ".log") {
    std::vector<std::string> argv = {kvcacheBinary(),
                                     "operator",
                                     "--kubeconfig=" + env.get("KUBECONFIG"),
                                     "--namespace=" + namespace_name,
                                     "--watch-namespace=" + namespace_name,
                                     "--lease-name=kvcache-operator",
                                     "--identity=" + identity,
                                     "--health-addr=127.0.0.1:0",
                                     "--metrics-addr=127.0.0.1:0",
                                     "--webhook-port=0",  // the webhooks have their own tests
                                     "--log-level=debug"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<Process>(argv, log_path_);
  }
  ~Operator() {
    process_.reset();
    if (!::testing::Test::HasFailure()) {
      fs::remove(log_path_);
    } else {
      std::cerr << "--- log of " << identity_ << " (" << log_path_ << ") kept\n";
    }
  }

  Process& process() { return *process_; }
  const std::string& identity() const { return identity_; }

  // The address printed in the log after `marker` ("127.0.0.1:PORT"), once it appears.
  std::string address(const std::string& marker) {
    std::string found;
    waitFor(
        [&] {
          const std::string log = process_->log();
          const std::regex re(marker + "http://([0-9.]+:[0-9]+)/");
          std::smatch m;
          if (std::regex_search(log, m, re)) {
            found = m[1];
            return true;
          }
          return !process_->running();
        },
        std::chrono::seconds(30));
    return found;
  }
  std::pair<int, std::string> get(const std::string& marker, const std::string& path) {
    const std::string addr = address(marker);
    if (addr.empty()) {
      return {0, "no address in the log:\n" + process_->log()};
    }
    kube::Config config;
    config.server = "http://" + addr;
    config.timeout = std::chrono::seconds(5);
    kube::HttpRequest r;
    r.method = "GET";
    r.url = path;
    auto answer = (*kube::Client::create(config))->send(r);
    if (answer.ok()) {
      return {answer->status, answer->body};
    }
    return {answer.error().httpStatus(), answer.error().describe()};
  }
  std::pair<int, std::string> health(const std::string& path) {
    return get("health probes on ", path);
  }
  std::pair<int, std::string> metrics() { return get("metrics on ", "/metrics"); }
  // 1 or 0 from leader_election_master_status, -1 when unreadable.
  int leaderGauge() {
    const auto m = metrics();
    const std::regex re("leader_election_master_status\\{name=\"kvcache-operator\"\\} ([01])");
    std::smatch match;
    if (m.first == 200 && std::regex_search(m.second, match, re)) {
      return std::stoi(match[1]);
    }
    return -1;
  }

private:
  std::string identity_;
  std::string log_path_;
  std::unique_ptr<Process> process_;
};

std::string holder(const Api& leases) {
  auto lease = leases.get("kvcache-operator");
  if (!lease.ok()) {
    return "";
  }
  return (*lease)["spec"].value("holderIdentity", std::string());
}

std::int64_t observedGeneration(const Api& pools, const std::string& name) {
  auto p = pools.get(name);
  if (!p.ok() || !(*p).contains("status")) {
    return 0;
  }
  return (*p)["status"].value("observedGeneration", std::int64_t{0});
}

TEST(OperatorIntegrationTest, WritesAStatusOncePerGenerationUnderItsFieldManager) {
  const ClusterEnv env = ClusterEnv::fromEnvironment();
  auto client = adminClient(env);
  ASSERT_NE(client, nullptr);
  TestNamespace namespace_name(client, "opgen");
  Api pools(client, kube::resources::kvCachePools());
  const std::string name = uniqueName("opgen");
  ASSERT_TRUE(pools.create(orphanPool(name, "1Gi")).ok());
  struct Cleanup {
    Api pools;
    std::string name;
    ~Cleanup() {
      (void)pools.patch(name, kube::MergePatch{Json{{"metadata", {{"finalizers", nullptr}}}}});
      (void)pools.remove(name);
    }
  } cleanup{pools, name};

  Operator op(env, namespace_name.name(), "op-gen");
  ASSERT_TRUE(
      waitFor([&] { return observedGeneration(pools, name) == 1; }, std::chrono::seconds(60)))
      << op.process().log();
  auto p = pools.get(name);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)["status"]["phase"], "Error");
  EXPECT_EQ((*p)["status"]["conditions"][0]["type"], "BackendResolved");
  EXPECT_EQ((*p)["status"]["conditions"][0]["reason"], "BackendNotFound");
  EXPECT_EQ((*p)["status"]["conditions"][0]["observedGeneration"], 1);

  // A spec change is evaluated, and only then marked observed.
  ASSERT_TRUE(
      pools.patch(name, kube::MergePatch{Json{{"spec", {{"quota", {{"total", "3Gi"}}}}}}}).ok());
  ASSERT_TRUE(
      waitFor([&] { return observedGeneration(pools, name) == 2; }, std::chrono::seconds(60)));
  p = pools.get(name);
  ASSERT_TRUE(p.ok());
  bool found = false;
  for (const Json& entry : (*p)["metadata"]["managedFields"]) {
    if (entry["manager"] == "kvcache-operator" && entry.value("subresource", "") == "status") {
      found = true;
      EXPECT_EQ(entry["operation"], "Update");
    }
  }
  EXPECT_TRUE(found) << (*p)["metadata"]["managedFields"].dump(2);

  // In step, the controller writes nothing more (level-based, no write loop), resyncs included.
  const std::string version = kube::object::resourceVersion(*p);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(kube::object::resourceVersion(*pools.get(name)), version);

  EXPECT_EQ(op.health("/healthz").first, 200);
  EXPECT_EQ(op.health("/readyz").first, 200);
  const auto metrics = op.metrics();
  EXPECT_EQ(metrics.first, 200);
  EXPECT_NE(metrics.second.find("controller_runtime_reconcile_total{controller="
                                "\"kvcachepool\""),
            std::string::npos)
      << metrics.second;
  EXPECT_NE(metrics.second.find("kvcache_status_writes_total{resource=\"kvcachepools\","
                                "outcome=\"written\"}"),
            std::string::npos);

  // SIGTERM: a clean exit that releases the Lease.
  Api leases(client, kube::resources::leases(), namespace_name.name());
  EXPECT_EQ(holder(leases), "op-gen");
  op.process().signal(SIGTERM);
  EXPECT_EQ(op.process().wait(std::chrono::seconds(30)), 0) << op.process().log();
  EXPECT_EQ(holder(leases), "");
}

struct Failover {
  double after_kill = 0;        // s from SIGKILL to the other replica holding the Lease
  double after_last_renew = 0;  // s from the killed leader's last renewTime to the takeover
};

TEST(OperatorIntegrationTest, ExactlyOneReplicaLeadsAndSigkillMovesTheLeaseInTime) {
  const ClusterEnv env = ClusterEnv::fromEnvironment();
  auto client = adminClient(env);
  ASSERT_NE(client, nullptr);
  TestNamespace namespace_name(client, "failover");
  Api leases(client, kube::resources::leases(), namespace_name.name());
  constexpr double kLease = 15.0;
  constexpr double kRetry = 2.0;
  constexpr int kTrials = 3;
  std::vector<Failover> results;
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::string a_id = "replica-a" + std::to_string(trial);
    const std::string b_id = "replica-b" + std::to_string(trial);
    Operator a(env, namespace_name.name(), a_id);
    Operator b(env, namespace_name.name(), b_id);
    ASSERT_TRUE(waitFor(
        [&] {
          const std::string h = holder(leases);
          return h == a_id || h == b_id;
        },
        std::chrono::seconds(60)));
    // Exactly one leads: the Lease names it and only its gauge says 1.
    ASSERT_TRUE(
        waitFor([&] { return a.leaderGauge() + b.leaderGauge() == 1; }, std::chrono::seconds(30)))
        << a.leaderGauge() << " " << b.leaderGauge();
    Operator& leader = holder(leases) == a_id ? a : b;
    Operator& standby = &leader == &a ? b : a;
    EXPECT_EQ(leader.leaderGauge(), 1);
    EXPECT_EQ(standby.leaderGauge(), 0);
    // Standbys run their informers too, and report ready once synced.
    EXPECT_TRUE(
        waitFor([&] { return standby.health("/readyz").first == 200; }, std::chrono::seconds(30)));
    // Let the leader renew a few times, then kill it without warning.
    std::this_thread::sleep_for(std::chrono::milliseconds(3000 + 700 * trial));
    leader.process().signal(SIGKILL);
    const auto killed = std::chrono::steady_clock::now();
    const auto killed_wall = std::chrono::system_clock::now();
    ASSERT_TRUE(leader.process().wait(std::chrono::seconds(10)).has_value());
    auto before = leases.get("kvcache-operator");
    ASSERT_TRUE(before.ok());
    const auto last_renew = kube::parseTime((*before)["spec"]["renewTime"].get<std::string>());
    ASSERT_TRUE(last_renew.ok());
    ASSERT_TRUE(waitFor([&] { return holder(leases) == standby.identity(); },
                        std::chrono::seconds(60), std::chrono::milliseconds(20)));
    const auto took = std::chrono::steady_clock::now();
    const auto took_wall = std::chrono::system_clock::now();
    Failover f;
    f.after_kill = std::chrono::duration<double>(took - killed).count();
    f.after_last_renew = std::chrono::duration<double>(took_wall - *last_renew).count();
    results.push_back(f);
    std::cout << "[ MEASURED ] trial " << trial << ": lease moved " << std::fixed
              << std::setprecision(2) << f.after_kill << " s after SIGKILL (" << f.after_last_renew
              << " s after the killed leader's last renewal, "
              << std::chrono::duration<double>(killed_wall - *last_renew).count()
              << " s of which before the kill)" << std::endl;
    // Expiry is judged from when the standby saw the last renewal, and it watches the Lease,
    // so it takes over one LeaseDuration after that renewal: within LeaseDuration +
    // RetryPeriod of the kill, as the issue asks (client-go's polling alone would allow up to
    // LeaseDuration + 2 x 2.2 x RetryPeriod).
    EXPECT_LE(f.after_kill, kLease + kRetry);
    EXPECT_GE(f.after_last_renew, kLease - 0.5);  // never before the lease could expire
    EXPECT_LE(f.after_last_renew, kLease + 1.0);
    ASSERT_TRUE(waitFor([&] { return standby.leaderGauge() == 1; }, std::chrono::seconds(10)));
    // Graceful stop of the new leader releases the Lease for the next trial.
    standby.process().signal(SIGTERM);
    EXPECT_EQ(standby.process().wait(std::chrono::seconds(30)), 0) << standby.process().log();
    EXPECT_EQ(holder(leases), "");
  }
  std::vector<double> kills;
  for (const Failover& f : results) {
    kills.push_back(f.after_kill);
  }
  std::sort(kills.begin(), kills.end());
  const double within = static_cast<double>(
      std::count_if(kills.begin(), kills.end(), [&](double s) { return s <= kLease + kRetry; }));
  std::cout << "[ MEASURED ] failover after SIGKILL over " << kills.size() << " trials: min "
            << kills.front() << " s, median " << kills[kills.size() / 2] << " s, max "
            << kills.back() << " s; " << within << "/" << kills.size()
            << " within LeaseDuration + RetryPeriod = " << kLease + kRetry << " s" << std::endl;
}

TEST(OperatorIntegrationTest, AGracefulStopHandsTheLeaseOverWithinARetry) {
  const ClusterEnv env = ClusterEnv::fromEnvironment();
  auto client = adminClient(env);
  ASSERT_NE(client, nullptr);
  TestNamespace namespace_name(client, "handover");
  Api leases(client, kube::resources::leases(), namespace_name.name());
  Operator a(env, namespace_name.name(), "first");
  ASSERT_TRUE(waitFor([&] { return holder(leases) == "first"; }, std::chrono::seconds(60)));
  Operator b(env, namespace_name.name(), "second");
  ASSERT_TRUE(waitFor([&] { return b.leaderGauge() == 0; }, std::chrono::seconds(30)));
  a.process().signal(SIGTERM);
  const auto stopped = std::chrono::steady_clock::now();
  EXPECT_EQ(a.process().wait(std::chrono::seconds(30)), 0);
  ASSERT_TRUE(waitFor([&] { return holder(leases) == "second"; }, std::chrono::seconds(30),
                      std::chrono::milliseconds(20)));
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  std::cout << "[ MEASURED ] graceful handover (SIGTERM, Lease released): " << took << " s"
            << std::endl;
  // A released Lease (holder "") is seen by the standby's watch and taken at once (without
  // the watch: at its next jittered try, within 2.2 x RetryPeriod).
  EXPECT_LE(took, 2.0);
}

TEST(OperatorIntegrationTest, BadFlagsAndBadTimingAreRefusedWithExitCode2) {
  auto [code, output] = run({kvcacheBinary(), "operator", "--lease-duration=5s",
                             "--renew-deadline=5s", "--kubeconfig=/nonexistent"});
  // Exit 2 before the (missing) kubeconfig is read, naming the flags.
  EXPECT_EQ(code, 2) << output;
  EXPECT_NE(output.find("--renew-deadline"), std::string::npos) << output;
  EXPECT_NE(output.find("greater than the renew deadline"), std::string::npos) << output;
  auto [code2, output2] = run({kvcacheBinary(), "operator", "--lease-duration=soon"});
  EXPECT_EQ(code2, 2) << output2;
  EXPECT_NE(output2.find("--lease-duration"), std::string::npos) << output2;
}

TEST(OperatorIntegrationTest, TheSelfManagedCertificateFlagsGoTogetherAndExcludeAFileOfYours) {
  auto [both, both_out] =
      run({kvcacheBinary(), "operator", "--kubeconfig=/nonexistent", "--webhook-cert-secret=s",
           "--webhook-service=svc", "--cert-dir=/tmp/x", "--tls-cert-file=a", "--tls-key-file=b"});
  EXPECT_EQ(both, 2) << both_out;
  EXPECT_NE(both_out.find("--webhook-cert-secret and --tls-cert-file exclude each other"),
            std::string::npos)
      << both_out;
  auto [alone, alone_out] =
      run({kvcacheBinary(), "operator", "--kubeconfig=/nonexistent", "--cert-dir=/tmp/x"});
  EXPECT_EQ(alone, 2) << alone_out;
  EXPECT_NE(alone_out.find("belong to --webhook-cert-secret"), std::string::npos) << alone_out;
  auto [partial, partial_out] =
      run({kvcacheBinary(), "operator", "--kubeconfig=/nonexistent", "--webhook-cert-secret=s"});
  EXPECT_EQ(partial, 2) << partial_out;
  EXPECT_NE(partial_out.find("needs --webhook-service and --cert-dir"), std::string::npos)
      << partial_out;
}

}  // namespace
}  // namespace kvc::it
