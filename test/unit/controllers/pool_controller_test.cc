// The pool controller on a fake API server and a fake master (contract §4–§6; issue 23 §6):
// the order of a pass's I/O, a conflict retried from a fresh read, a failed write leaving the
// rest of the pass undone, an unchanged world left alone, the ripple to the master's other
// pools, the release of a deleting Binding once its admission window has passed, and a terminal
// error backstopped by the queue. Only the reconciler's public face is used: its config, its
// reconcile(), and what reaches the cluster and the master.
#include "kvc/controllers/pool_controller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "eventually.h"
#include "fake_apiserver.h"
#include "fake_cluster.h"
#include "fake_master.h"
#include "kvc/api/backend.h"
#include "kvc/api/binding.h"
#include "kvc/api/binding_conditions.h"
#include "kvc/api/pool.h"
#include "kvc/api/pool_conditions.h"
#include "kvc/controllers/indexes.h"
#include "kvc/kube/client.h"
#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"
#include "kvc/kube/time.h"
#include "kvc/runtime/finalizer.h"
#include "kvc/runtime/trigger.h"
#include "matchers.h"

namespace kvc::controllers {
namespace {

using kvc::testing::FakeApiServer;
using kvc::testing::FakeCluster;
using kvc::testing::FakeMaster;
using kvc::testing::StatusIs;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

namespace res = kube::resources;

constexpr const char* kAdmin = "mooncake-dram-leader.gpustack-system.svc:9003";
constexpr const char* kClient = "mooncake-dram-leader.gpustack-system.svc:50051";
constexpr std::int64_t kGi = std::int64_t{1} << 30;

Json backendObject() {
  return Json::parse(std::string(R"({
    "apiVersion": "worker.gpustack.ai/v1", "kind": "KVCacheBackend",
    "metadata": {"name": "mooncake-dram", "generation": 1},
    "spec": {"type": "Mooncake", "connection": {"managed": {"leader": {}, "members": [
      {"nodeSelector": {"kubernetes.io/os": "linux"}, "medium": "DRAM",
       "capacityPerMember": "8Gi"}]}}},
    "status": {"observedGeneration": 1, "endpoints": [
      {"name": "Client", "address": ")") +
                     kClient + R"("},
      {"name": "Admin", "address": ")" +
                     kAdmin + R"("}]}})");
}

Json poolObject(const std::string& name, const std::string& total = "16Gi") {
  return Json{{"apiVersion", "worker.gpustack.ai/v1"},
              {"kind", "KVCachePool"},
              {"metadata", {{"name", name}}},
              {"spec", {{"backends", {"mooncake-dram"}}, {"quota", {{"total", total}}}}}};
}

Json bindingObject(const std::string& namespace_name, const std::string& name,
                   const std::string& pool, const std::string& ceiling,
                   const std::string& domain = "default") {
  return Json{{"apiVersion", "worker.gpustack.ai/v1"},
              {"kind", "KVCachePoolBinding"},
              {"metadata", {{"namespace", namespace_name}, {"name", name}}},
              {"spec",
               {{"poolRef", {{"name", pool}}},
                {"quota", {{"ceiling", ceiling}}},
                {"domain", {{"name", domain}, {"blockSize", 64}, {"dtype", "bfloat16"}}}}}};
}

// The lines of the log that are writes to the API server, or any call to the master.
std::vector<std::string> writesAndMasterCalls(const testing::IoLog& log) {
  return log.filtered([](const std::string& line) {
    return testing::isWrite(line) || line.find(" master/") != std::string::npos;
  });
}

class PoolControllerTest : public ::testing::Test {
protected:
  PoolControllerTest() : cluster_(clock_), master_(kAdmin, cluster_.sharedLog()) {
    server_.setHandler(cluster_.handler());
    runtime::Store& pools = cluster_.cache(res::kvCachePools());
    pools.addIndex(kPoolsByBackend, &poolBackends);
    runtime::Store& bindings = cluster_.cache(res::kvCachePoolBindings());
    bindings.addIndex(kBindingsByPool, &bindingPool);
    runtime::Store& pods = cluster_.cache(res::pods(), "", heldPodSelector());
    pods.addIndex(kPodsByBinding, &podBinding);
    config_.client = kube::Client::create(server_.config()).value();
    config_.pools = &pools;
    config_.bindings = &bindings;
    config_.backends = &cluster_.cache(res::kvCacheBackends());
    config_.pods = &pods;
    config_.config_maps = &cluster_.cache(res::configMaps(), "gpustack-system",
                                          "app.kubernetes.io/component=tenant-quota-policy");
    config_.model_deployments = &cluster_.cache(res::modelDeployments());
    config_.stores = [clients = master_.clients()](const StoreTarget& target) {
      return clients(target.admin_address);
    };
    config_.clock = &clock_;
  }

  PoolReconciler& reconciler() {
    if (!reconciler_) {
      reconciler_ = std::make_shared<PoolReconciler>(config_);
    }
    return *reconciler_;
  }
  Result<runtime::Action> pass(const std::string& pool) {
    return reconciler().reconcile(runtime::Request{"", pool}, {});
  }

  // The world of contract §4's walkthrough: a managed multi-tenant master with 16 GiB, the
  // pool shared-dram over it, and Binding team-a/team-a asking 8 GiB for domain "default".
  void walkthrough() {
    cluster_.create(res::kvCacheBackends(), backendObject());
    cluster_.create(res::kvCachePools(), poolObject("shared-dram"));
    cluster_.create(res::kvCachePoolBindings(),
                    bindingObject("team-a", "team-a", "shared-dram", "8Gi"));
  }

  api::KVCachePool pool(const std::string& name) {
    auto object = cluster_.get(res::kvCachePools(), name);
    EXPECT_TRUE(object.has_value()) << name;
    return api::poolFromJson(object.value_or(Json::object())).value();
  }
  std::optional<api::KVCachePoolBinding> binding(const std::string& key) {
    auto object = cluster_.get(res::kvCachePoolBindings(), key);
    if (!object) {
      return std::nullopt;
    }
    return api::bindingFromJson(*object).value();
  }
  static const api::Condition& condition(const api::StatusHead& status, std::string_view type) {
    static const api::Condition kAbsent = [] {
      api::Condition absent;
      absent.type = "absent";
      return absent;
    }();
    const api::Condition* found = api::findCondition(status.conditions, type);
    return found == nullptr ? kAbsent : *found;
  }

  FakeClock clock_;
  FakeCluster cluster_;
  FakeApiServer server_;  // after cluster_: stops before the handler's state goes
  FakeMaster master_;
  PoolControllerConfig config_;
  std::shared_ptr<PoolReconciler> reconciler_;
};

// (a) Contract §4 "Pass order" and pool_plan.h: the guards (pool finalizer, backend claim,
// Binding finalizer) before any write to the master; the ledger; the master read again; the
// managed master's policy ConfigMap; the Binding's status; the pool's status.
TEST_F(PoolControllerTest, ANewBindingIsGuardedThenWrittenToTheLedgerThenReported) {
  walkthrough();
  auto outcome = pass("shared-dram");
  ASSERT_THAT(outcome, testing::IsOk());
  ASSERT_TRUE(outcome->requeue_after.has_value());
  EXPECT_EQ(*outcome->requeue_after, seconds(30));

  // The ledger is read in observe, before the plan decides anything; every guard comes before
  // the first write to the master, and the pass's one scrape after the writes.
  EXPECT_THAT(writesAndMasterCalls(cluster_.log()),
              ElementsAre("LIST master/tenant_quotas",                 //
                          "PATCH kvcachepools/shared-dram",            // finalizer
                          "PUT kvcachebackends/mooncake-dram/status",  // usedBy
                          "PATCH kvcachepoolbindings/team-a/team-a",   // finalizer
                          "PUT master/tenant_quotas/default",          //
                          "LIST master/tenant_quotas",                 // read back
                          "GET master/metrics",                        //
                          "APPLY configmaps/gpustack-system/mooncake-dram-tenant-quota-policy",
                          "PUT kvcachepoolbindings/team-a/team-a/status",  //
                          "PUT kvcachepools/shared-dram/status"));

  const api::KVCachePool p = pool("shared-dram");
  EXPECT_TRUE(api::hasFinalizer(p.metadata, api::pool::kFinalizer));
  EXPECT_EQ(p.status.phase, "Ready") << p.status.phase_message;
  EXPECT_EQ(p.status.client_endpoint, kClient);
  EXPECT_EQ(condition(p.status, api::pool::kQuotaLedgerAvailable).reason,
            api::pool::kReasonAvailable);
  const auto b = binding("team-a/team-a");
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(api::hasFinalizer(b->metadata, api::binding::kFinalizer));
  EXPECT_EQ(b->status.phase, "Ready") << b->status.phase_message;
  EXPECT_EQ(b->status.effective_quota, 8 * kGi);
  EXPECT_EQ(condition(b->status, api::binding::kQuotaGranted).reason, api::binding::kReasonGranted);
  const api::KVCacheBackend backend =
      api::backendFromJson(*cluster_.get(res::kvCacheBackends(), "mooncake-dram")).value();
  EXPECT_THAT(backend.status.used_by,
              ElementsAre(api::ObjectReference{"KVCachePool", "", "shared-dram"}));
  EXPECT_EQ(backend.status.observed_generation, 1) << "the backend controller's to stamp";
  EXPECT_EQ(master_.requested(), (std::map<std::string, std::int64_t>{{"default", 8 * kGi}}));
  const auto policy =
      cluster_.get(res::configMaps(), "gpustack-system/mooncake-dram-tenant-quota-policy");
  ASSERT_TRUE(policy.has_value());
  EXPECT_EQ((*policy)["metadata"]["ownerReferences"][0]["name"], "mooncake-dram");
  EXPECT_NE((*policy)["data"].dump().find("default"), std::string::npos);
  EXPECT_EQ(master_.addressesAsked().front(), kAdmin);
}

// Fencing (docs/operator.md): a replica whose leadership ended during the pass reports nothing.
// Its store writes are refused by the fenced transport (store.Fenced.*; this fake master sits
// above the transport); here, no status is written from what it read.
TEST_F(PoolControllerTest, APassPastTheFenceWritesNoStatus) {
  walkthrough();
  config_.leading_until = [this] { return clock_.now(); };  // the fence has just passed
  auto outcome = pass("shared-dram");
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), StatusCode::Aborted);
  EXPECT_NE(outcome.status().message().find("leadership ended during the pass"), std::string::npos)
      << outcome.status().message();
  // The guards came before the ledger stage (the backend's usedBy among them); no report after.
  for (const std::string& write : cluster_.log().writes()) {
    const bool status = write.find("/status") != std::string::npos;
    EXPECT_TRUE(!status || write == "PUT kvcachebackends/mooncake-dram/status")
        << "a status written past the fence: " << write;
  }
  EXPECT_FALSE(binding("team-a/team-a")->status.effective_quota.has_value());
}

// (d) Contract §5 "No-op passes": a second pass over an unchanged world reads the master once
// and writes nothing, to the API server or to the master.
TEST_F(PoolControllerTest, AnUnchangedWorldIsReadAndLeftAlone) {
  walkthrough();
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  const Json pool_version =
      cluster_.get(res::kvCachePools(), "shared-dram")->at("metadata").at("resourceVersion");
  cluster_.log().clear();
  auto outcome = pass("shared-dram");
  ASSERT_THAT(outcome, testing::IsOk());
  EXPECT_THAT(cluster_.log().writes(), IsEmpty());
  EXPECT_THAT(writesAndMasterCalls(cluster_.log()),
              ElementsAre("LIST master/tenant_quotas", "GET master/metrics"));
  EXPECT_EQ(cluster_.get(res::kvCachePools(), "shared-dram")->at("metadata")["resourceVersion"],
            pool_version);
}

// (b) Two writers share a Binding's status (a ModelDeployment writes usedBy, the pool
// controller the figures): a write that meets a newer object is a 409, and the pass decides the
// status again from the fresh object — keeping the other writer's part — and writes it.
TEST_F(PoolControllerTest, AConflictOnAStatusIsRetriedFromAFreshRead) {
  walkthrough();
  cluster_.beforeNext("PUT kvcachepoolbindings/team-a/team-a/status", [&] {
    cluster_.modify(res::kvCachePoolBindings(), "team-a/team-a", [](Json& object) {
      object["status"]["usedBy"] =
          Json::parse(R"([{"kind":"ModelDeployment","namespace":"","name":"qwen-chat"}])");
    });
  });
  auto outcome = pass("shared-dram");
  ASSERT_THAT(outcome, testing::IsOk());
  const auto lines = cluster_.log().lines();
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "PUT kvcachepoolbindings/team-a/team-a/status"),
            2)
      << "the 409, then the write from the fresh read";
  const auto b = binding("team-a/team-a");
  ASSERT_TRUE(b.has_value());
  EXPECT_THAT(b->status.used_by,
              ElementsAre(api::ObjectReference{"ModelDeployment", "", "qwen-chat"}))
      << "the other writer's part is kept";
  EXPECT_EQ(b->status.effective_quota, 8 * kGi);
  EXPECT_EQ(b->status.phase, "Ready") << b->status.phase_message;
  EXPECT_EQ(pool("shared-dram").status.phase, "Ready");
}

// The same on the pool's own status: someone labels the pool between the read and the write.
TEST_F(PoolControllerTest, AConflictOnThePoolStatusIsRetriedFromAFreshRead) {
  walkthrough();
  cluster_.beforeNext("PUT kvcachepools/shared-dram/status", [&] {
    cluster_.modify(res::kvCachePools(), "shared-dram",
                    [](Json& object) { object["metadata"]["labels"]["team"] = "infra"; });
  });
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  const auto lines = cluster_.log().lines();
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "PUT kvcachepools/shared-dram/status"), 2);
  const auto object = cluster_.get(res::kvCachePools(), "shared-dram");
  EXPECT_EQ((*object)["metadata"]["labels"]["team"], "infra");
  EXPECT_EQ(pool("shared-dram").status.phase, "Ready");
}

// Another controller adds a finalizer of its own between the cache read and the patch: the
// guarded patch fails (its `test` no longer holds) instead of clobbering it, the pass stops
// before the master is written and says "retry from a fresh read" (Aborted), and the next pass
// adds ours next to theirs.
TEST_F(PoolControllerTest, AFinalizerPatchThatMeetsANewerListIsRetriedFromAFreshRead) {
  walkthrough();
  cluster_.beforeNext("PATCH kvcachepoolbindings/team-a/team-a", [&] {
    cluster_.modify(res::kvCachePoolBindings(), "team-a/team-a", [](Json& object) {
      object["metadata"]["finalizers"] = Json::array({"example.com/audit"});
    });
  });
  EXPECT_THAT(pass("shared-dram"), StatusIs(StatusCode::Aborted));
  EXPECT_THAT(cluster_.log().filtered([](const std::string& line) {
    return line.find("PUT master/") != std::string::npos;
  }),
              IsEmpty());
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  const auto b = binding("team-a/team-a");
  ASSERT_TRUE(b.has_value());
  EXPECT_THAT(b->metadata.finalizers,
              ElementsAre("example.com/audit", std::string(api::binding::kFinalizer)));
  EXPECT_EQ(master_.requested().count("default"), 1U);
}

// (c) The Binding's finalizer could not be added: nothing that it guards is written — no ledger
// write, no ConfigMap, no status — and the error says to retry. The next pass re-plans from what
// is there and does only what is left.
TEST_F(PoolControllerTest, AFailedFinalizerPatchLeavesTheLedgerUntouched) {
  walkthrough();
  cluster_.failNext("PATCH kvcachepoolbindings/team-a/team-a", 500);
  auto outcome = pass("shared-dram");
  EXPECT_THAT(outcome, StatusIs(StatusCode::Unavailable));
  EXPECT_THAT(writesAndMasterCalls(cluster_.log()),
              ElementsAre("LIST master/tenant_quotas", "PATCH kvcachepools/shared-dram",
                          "PUT kvcachebackends/mooncake-dram/status",
                          "PATCH kvcachepoolbindings/team-a/team-a"));
  EXPECT_THAT(master_.requested(), IsEmpty());
  EXPECT_FALSE(api::hasFinalizer(binding("team-a/team-a")->metadata, api::binding::kFinalizer));
  EXPECT_TRUE(binding("team-a/team-a")->status.phase.empty()) << "no status written";
  EXPECT_TRUE(pool("shared-dram").status.phase.empty()) << "no status written";

  cluster_.log().clear();
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  EXPECT_THAT(
      cluster_.log().writes(),
      ElementsAre("PATCH kvcachepoolbindings/team-a/team-a", "PUT master/tenant_quotas/default",
                  "APPLY configmaps/gpustack-system/mooncake-dram-tenant-quota-policy",
                  "PUT kvcachepoolbindings/team-a/team-a/status",
                  "PUT kvcachepools/shared-dram/status"));
  EXPECT_EQ(binding("team-a/team-a")->status.phase, "Ready");
}

// (c) Each guard in turn fails: the pass stops at it — nothing after it is written, and the
// master is never written.
TEST_F(PoolControllerTest, AFailedGuardStopsThePassBeforeAnyWriteToTheMaster) {
  const std::vector<std::string> guards = {"PATCH kvcachepools/shared-dram",
                                           "PUT kvcachebackends/mooncake-dram/status",
                                           "PATCH kvcachepoolbindings/team-a/team-a"};
  for (std::size_t failing = 0; failing < guards.size(); ++failing) {
    SCOPED_TRACE(guards[failing]);
    FakeCluster cluster(clock_);
    FakeApiServer server;
    server.setHandler(cluster.handler());
    FakeMaster master(kAdmin, cluster.sharedLog());
    PoolControllerConfig config = config_;
    config.client = kube::Client::create(server.config()).value();
    runtime::Store& pools = cluster.cache(res::kvCachePools());
    pools.addIndex(kPoolsByBackend, &poolBackends);
    runtime::Store& bindings = cluster.cache(res::kvCachePoolBindings());
    bindings.addIndex(kBindingsByPool, &bindingPool);
    runtime::Store& pods = cluster.cache(res::pods(), "", heldPodSelector());
    pods.addIndex(kPodsByBinding, &podBinding);
    config.pools = &pools;
    config.bindings = &bindings;
    config.pods = &pods;
    config.backends = &cluster.cache(res::kvCacheBackends());
    config.config_maps = nullptr;
    config.model_deployments = nullptr;
    config.stores = [clients = master.clients()](const StoreTarget& target) {
      return clients(target.admin_address);
    };
    cluster.create(res::kvCacheBackends(), backendObject());
    cluster.create(res::kvCachePools(), poolObject("shared-dram"));
    cluster.create(res::kvCachePoolBindings(),
                   bindingObject("team-a", "team-a", "shared-dram", "8Gi"));
    cluster.failNext(guards[failing], 500);

    PoolReconciler reconciler(config);
    EXPECT_THAT(reconciler.reconcile(runtime::Request{"", "shared-dram"}, {}),
                StatusIs(StatusCode::Unavailable));
    EXPECT_EQ(cluster.log().writes(),
              std::vector<std::string>(guards.begin(), guards.begin() + failing + 1));
    EXPECT_THAT(master.requested(), IsEmpty());
    auto pool_object = cluster.get(res::kvCachePools(), "shared-dram");
    EXPECT_FALSE(pool_object->contains("status")) << "no status written";
  }
}

// (c) The master fails the ledger PUT: the statuses say so (LedgerUnreachable), the pass returns
// Unavailable (retried with backoff), and the next pass plans the write again.
TEST_F(PoolControllerTest, AFailedLedgerWriteIsReportedAndRetried) {
  walkthrough();
  master_.failNext("PUT master/tenant_quotas/default",
                   store::StoreError(store::StoreErrorKind::Transport,
                                     "writing the quota of reuse domain \"default\": reset"));
  auto outcome = pass("shared-dram");
  EXPECT_THAT(outcome, StatusIs(StatusCode::Unavailable, ::testing::HasSubstr("reset")));
  const api::KVCachePool p = pool("shared-dram");
  EXPECT_EQ(p.status.phase, "Error");
  EXPECT_EQ(condition(p.status, api::pool::kQuotaLedgerAvailable).status, "False");
  EXPECT_EQ(condition(p.status, api::pool::kQuotaLedgerAvailable).reason,
            api::pool::kReasonLedgerUnreachable);
  EXPECT_NE(condition(p.status, api::pool::kQuotaLedgerAvailable).message.find("reset"),
            std::string::npos);
  const auto b = binding("team-a/team-a");
  EXPECT_NE(b->status.phase, "Ready");
  EXPECT_FALSE(b->status.effective_quota.has_value()) << "nothing was granted";
  EXPECT_THAT(master_.requested(), IsEmpty());

  cluster_.log().clear();
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  const auto writes = cluster_.log().writes();
  EXPECT_NE(std::find(writes.begin(), writes.end(), "PUT master/tenant_quotas/default"),
            writes.end());
  EXPECT_EQ(pool("shared-dram").status.phase, "Ready");
  EXPECT_EQ(binding("team-a/team-a")->status.effective_quota, 8 * kGi);
}

// (c) A master that accepts and never answers (issue 25 §2.5): the ledger read's deadline is the
// pass's only wait on it. No scrape follows (a second deadline), the statuses say the ledger is
// unreachable and the Binding's figures were not read.
TEST_F(PoolControllerTest, AMasterThatLeavesTheLedgerReadUnansweredIsAskedNothingMore) {
  walkthrough();
  master_.failNext("LIST master/tenant_quotas",
                   store::StoreError(store::StoreErrorKind::DeadlineExceeded,
                                     "reading the tenant ledger: no answer within 5000 ms"));
  auto outcome = pass("shared-dram");
  EXPECT_FALSE(outcome.ok() && !outcome->requeue_after) << "the pass is tried again";
  const auto calls = cluster_.log().filtered(
      [](const std::string& line) { return line.find(" master/") != std::string::npos; });
  EXPECT_THAT(calls, ElementsAre("LIST master/tenant_quotas"));
  const api::KVCachePool p = pool("shared-dram");
  EXPECT_EQ(condition(p.status, api::pool::kQuotaLedgerAvailable).reason,
            api::pool::kReasonLedgerUnreachable);
  EXPECT_NE(condition(p.status, api::pool::kQuotaLedgerAvailable).message.find("no answer"),
            std::string::npos);
  const auto b = binding("team-a/team-a");
  ASSERT_TRUE(b.has_value());
  EXPECT_NE(condition(b->status, api::binding::kQuotaObserved).message.find("not attempted"),
            std::string::npos)
      << condition(b->status, api::binding::kQuotaObserved).message;
}

// (c) A pass whose master another worker's pass holds (one on a master that never answers
// holds it for a request deadline) does not wait that out: it is retried later, asking the
// master nothing, and its worker is free for the pools of other backends (issue 25 §2.5).
TEST_F(PoolControllerTest, APassWhoseMasterAnotherPassHoldsIsRetriedNotWaitedFor) {
  walkthrough();
  cluster_.create(res::kvCachePools(), poolObject("second-dram"));
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> first{true};
  config_.stores = [clients = master_.clients(), &entered, released,
                    &first](const StoreTarget& target) {
    if (first.exchange(false)) {
      entered.set_value();  // inside the first pass, its master's lock held
      released.wait();
    }
    return clients(target.admin_address);
  };
  reconciler();
  std::thread held([this] { (void)pass("shared-dram"); });
  entered.get_future().wait();
  const std::size_t before =
      cluster_.log().filtered([](const std::string&) { return true; }).size();
  auto outcome = pass("second-dram");
  const std::size_t after = cluster_.log().filtered([](const std::string&) { return true; }).size();
  release.set_value();
  held.join();
  ASSERT_THAT(outcome, testing::IsOk());
  ASSERT_TRUE(outcome->requeue_after.has_value());
  EXPECT_GT(*outcome->requeue_after, Clock::Duration::zero());
  EXPECT_EQ(after, before) << "the retried pass read and wrote nothing";
  EXPECT_THAT(pass("second-dram"), testing::IsOk()) << "the master free, the pass goes ahead";
}

// (c) While one pass waits out a master that left the last pass's ledger read unanswered, a
// sibling pool's pass does not go unreported: it says LedgerUnreachable from that answer, asks
// the master nothing, writes no ledger and is retried; once the master answers a pass reads it
// again. (Three pools on a hung master: two passes taking turns on its lock starved the third,
// which stayed Ready.)
TEST_F(PoolControllerTest, APoolWhoseMasterHungForAnotherPassIsReportedFromThatPass) {
  walkthrough();
  cluster_.create(res::kvCachePools(), poolObject("second-dram"));
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> calls{0};
  config_.stores = [clients = master_.clients(), &entered, released,
                    &calls](const StoreTarget& target) {
    if (calls.fetch_add(1) == 1) {
      entered.set_value();  // inside the second pass, its master's lock held
      released.wait();
    }
    return clients(target.admin_address);
  };
  reconciler();
  master_.failNext("LIST master/tenant_quotas",
                   store::StoreError(store::StoreErrorKind::DeadlineExceeded,
                                     "reading the tenant ledger: no answer within 5000 ms"));
  EXPECT_FALSE(pass("shared-dram").ok()) << "the master left the ledger read unanswered";
  std::thread held([this] { (void)pass("shared-dram"); });
  entered.get_future().wait();
  const auto asked = [this] {
    return cluster_.log()
        .filtered(
            [](const std::string& line) { return line.find(" master/") != std::string::npos; })
        .size();
  };
  const std::size_t before = asked();
  auto outcome = pass("second-dram");
  const std::size_t after = asked();
  release.set_value();
  held.join();
  ASSERT_THAT(outcome, testing::IsOk());
  ASSERT_TRUE(outcome->requeue_after.has_value());
  EXPECT_EQ(after, before) << "the master was asked nothing";
  const auto reported = condition(pool("second-dram").status, api::pool::kQuotaLedgerAvailable);
  EXPECT_EQ(reported.reason, api::pool::kReasonLedgerUnreachable);
  EXPECT_NE(reported.message.find("no answer within 5000 ms"), std::string::npos)
      << reported.message;

  ASSERT_THAT(pass("second-dram"), testing::IsOk()) << "the master free and answering";
  EXPECT_EQ(condition(pool("second-dram").status, api::pool::kQuotaLedgerAvailable).status, "True");
}

// (c) A failed status write of a Binding stops the pass before the pool's status.
TEST_F(PoolControllerTest, AFailedBindingStatusWriteLeavesThePoolStatusUnwritten) {
  walkthrough();
  cluster_.failNext("PUT kvcachepoolbindings/team-a/team-a/status", 503, "ServiceUnavailable");
  EXPECT_THAT(pass("shared-dram"), StatusIs(StatusCode::Unavailable));
  const auto writes = cluster_.log().writes();
  ASSERT_FALSE(writes.empty());
  EXPECT_EQ(writes.back(), "PUT kvcachepoolbindings/team-a/team-a/status");
  EXPECT_TRUE(pool("shared-dram").status.phase.empty());
}

// (e) A write that recuts the master moves the grants of another pool's Bindings: that pool is
// passed again now (through the controller's trigger), not at its resync.
TEST_F(PoolControllerTest, AWriteThatMovesAnotherPoolsGrantFiresTheRipple) {
  // Who the trigger asked for.
  class Recorder final : public runtime::Reconciler {
  public:
    Result<runtime::Action> reconcile(const runtime::Request& request, std::stop_token) override {
      std::lock_guard<std::mutex> guard(mutex_);
      seen_.push_back(request.key());
      return runtime::Action::done();
    }
    std::vector<std::string> seen() {
      std::lock_guard<std::mutex> guard(mutex_);
      return seen_;
    }

  private:
    std::mutex mutex_;
    std::vector<std::string> seen_;
  };
  auto recorder = std::make_shared<Recorder>();
  runtime::ControllerOptions options;
  options.name = "ripple";
  runtime::Controller controller(std::move(options), recorder, clock_);
  config_.ripple = std::make_shared<runtime::Trigger>();
  controller.watch(config_.ripple);

  cluster_.create(res::kvCacheBackends(), backendObject());
  cluster_.create(res::kvCachePools(), poolObject("pool-a"));
  cluster_.create(res::kvCachePoolBindings(), bindingObject("team-a", "a", "pool-a", "8Gi", "a"));
  ASSERT_THAT(pass("pool-a"), testing::IsOk());
  EXPECT_EQ(controller.queue().len(), 0U) << "8 of 16 GiB: no recut, no other pool";
  ASSERT_EQ(master_.effective("a"), 8 * kGi);

  cluster_.create(res::kvCachePools(), poolObject("pool-b"));
  cluster_.create(res::kvCachePoolBindings(), bindingObject("team-b", "b", "pool-b", "12Gi", "b"));
  ASSERT_THAT(pass("pool-b"), testing::IsOk());
  ASSERT_LT(master_.effective("a"), 8 * kGi) << "20 GiB asked of 16: the store recut";
  ASSERT_EQ(controller.queue().len(), 1U);
  ASSERT_TRUE(controller.processNext());
  EXPECT_THAT(recorder->seen(), ElementsAre("pool-a"));

  // pool-a's own pass then reports the grant the recut left it.
  ASSERT_THAT(pass("pool-a"), testing::IsOk());
  EXPECT_EQ(binding("team-a/a")->status.effective_quota, master_.effective("a"));
  controller.stop();
}

// (f) Contract §4 "Teardown" and pool_plan.h: a deleting Binding keeps its domain while the
// admission window (the Pod webhook's timeout) runs; once it has passed and a live list shows no
// labelled Pod naming it, the domain leaves the ledger, then the finalizer goes.
TEST_F(PoolControllerTest, ADeletingBindingIsReleasedOnceItsWindowHasPassed) {
  walkthrough();
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  cluster_.modify(res::kvCachePoolBindings(), "team-a/team-a", [&](Json& object) {
    object["metadata"]["deletionTimestamp"] = kube::formatTime(clock_.wallNow());
  });

  cluster_.log().clear();
  auto held = pass("shared-dram");
  ASSERT_THAT(held, testing::IsOk());
  ASSERT_TRUE(held->requeue_after.has_value());
  EXPECT_LE(*held->requeue_after, seconds(11)) << "passed again when the window closes";
  EXPECT_EQ(master_.requested().count("default"), 1U) << "kept while the window runs";

  auto b = binding("team-a/team-a");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->status.phase, "Deleting");
  EXPECT_EQ(condition(b->status, api::binding::kReleasable).status, "False");

  clock_.advance(seconds(11));
  cluster_.log().clear();
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  // (When the policy ConfigMap drops the domain is the subject of the test below.)
  EXPECT_THAT(cluster_.log().filtered([](const std::string& line) {
    return (testing::isWrite(line) || line.find(" master/") != std::string::npos) &&
           line.find("configmaps/") == std::string::npos;
  }),
              ElementsAre("LIST master/tenant_quotas", "DELETE master/tenant_quotas/default",
                          "LIST master/tenant_quotas", "GET master/metrics",
                          "PATCH kvcachepoolbindings/team-a/team-a",  // the finalizer goes
                          "PUT kvcachepools/shared-dram/status"));
  const auto lines = cluster_.log().lines();
  EXPECT_NE(std::find(lines.begin(), lines.end(), "LIST pods/team-a"), lines.end())
      << "the labelled Pods are listed live once the window has passed";
  EXPECT_THAT(master_.requested(), IsEmpty());
  EXPECT_FALSE(binding("team-a/team-a").has_value()) << "deleted once its finalizer went";
  const auto policy =
      cluster_.get(res::configMaps(), "gpustack-system/mooncake-dram-tenant-quota-policy");
  ASSERT_TRUE(policy.has_value());
  EXPECT_EQ((*policy)["data"].dump().find("default"), std::string::npos);
}

// Troubleshooting "Two Bindings report one domain": the fix is to delete one of them. The deleted
// one owes the ledger nothing (the contested domain was left out of it), so it is released as
// soon as its admission window has passed, and the other one is then registered and granted.
TEST_F(PoolControllerTest, DeletingOneOfTwoContestedBindingsReleasesItWhenItsWindowCloses) {
  cluster_.create(res::kvCacheBackends(), backendObject());
  cluster_.create(res::kvCachePools(), poolObject("shared-dram"));
  cluster_.create(res::kvCachePoolBindings(),
                  bindingObject("team-a", "claim", "shared-dram", "4Gi", "shared"));
  cluster_.create(res::kvCachePoolBindings(),
                  bindingObject("team-b", "claim", "shared-dram", "4Gi", "shared"));
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  EXPECT_EQ(condition(binding("team-a/claim")->status, api::binding::kDomainExclusive).reason,
            "DomainClaimedByMultipleBindings");
  EXPECT_EQ(master_.requested().count("shared"), 0U) << "a contested domain is left out";

  cluster_.modify(res::kvCachePoolBindings(), "team-b/claim", [&](Json& object) {
    object["metadata"]["deletionTimestamp"] = kube::formatTime(clock_.wallNow());
  });
  auto held = pass("shared-dram");
  ASSERT_THAT(held, testing::IsOk());
  ASSERT_TRUE(held->requeue_after.has_value());
  EXPECT_LE(*held->requeue_after, seconds(11)) << "passed again when the window closes";
  ASSERT_TRUE(binding("team-b/claim").has_value()) << "held while its window runs";
  // The domain is registered for the live claim while the deleting one is held: the pool lists it
  // once (status.domains is keyed by name, and the API server refuses a duplicate), naming the
  // live Binding.
  const auto listed = pool("shared-dram").status.domains;
  ASSERT_EQ(listed.size(), 1U);
  EXPECT_EQ(listed[0].binding_namespace + "/" + listed[0].binding_name, "team-a/claim");

  clock_.advance(seconds(11));
  auto released = pass("shared-dram");
  ASSERT_THAT(released, testing::IsOk());
  EXPECT_FALSE(binding("team-b/claim").has_value()) << "released once its window has passed";
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  const auto kept = binding("team-a/claim");
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(condition(kept->status, api::binding::kDomainExclusive).status, "True");
  EXPECT_EQ(master_.requested().count("shared"), 1U) << "the domain is registered at last";
}

// CONTRACT GAP (reported; this test fails on 0ff2b1a). Contract §3.4: the policy ConfigMap —
// the seed a restarted master reloads its ledger from — holds "every non-contested domain of
// every Binding of every pool on the backend", and pool_plan.h calls it "what its ledger should
// hold". While a deleting Binding is held (its admission window runs, or a Pod still names it)
// the pass keeps its domain in the ledger on purpose — but the ConfigMap is re-rendered without
// it as soon as the deletion begins (policy::seededTenants keeps only desired, retained and
// contested domains). A master restarted in that window comes back without the domain, and the
// Pods still writing under it get TENANT_NOT_REGISTERED: what the window exists to prevent.
TEST_F(PoolControllerTest, AHeldDeletingBindingsDomainStaysInThePolicySeed) {
  walkthrough();
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  cluster_.modify(res::kvCachePoolBindings(), "team-a/team-a", [&](Json& object) {
    object["metadata"]["deletionTimestamp"] = kube::formatTime(clock_.wallNow());
  });
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  ASSERT_EQ(master_.requested().count("default"), 1U) << "the ledger keeps it: the window runs";
  const auto policy =
      cluster_.get(res::configMaps(), "gpustack-system/mooncake-dram-tenant-quota-policy");
  ASSERT_TRUE(policy.has_value());
  const std::string seed = (*policy)["data"].dump();
  EXPECT_NE(seed.find("default"), std::string::npos)
      << "the seed drops a domain the ledger still holds: " << seed;
}

// (f) A labelled Pod naming the deleting Binding holds it, window or not.
TEST_F(PoolControllerTest, ADeletingBindingIsHeldByAPodThatNamesIt) {
  walkthrough();
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  cluster_.create(res::pods(), Json::parse(R"({"metadata": {"namespace": "team-a",
      "name": "vllm-0", "labels": {"kvcache.gpustack.ai/inject": "true"},
      "annotations": {"kvcache.gpustack.ai/binding": "team-a"}},
      "status": {"phase": "Running"}})"));
  cluster_.modify(res::kvCachePoolBindings(), "team-a/team-a", [&](Json& object) {
    object["metadata"]["deletionTimestamp"] = kube::formatTime(clock_.wallNow());
  });
  clock_.advance(seconds(60));
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  EXPECT_EQ(master_.requested().count("default"), 1U);
  const auto b = binding("team-a/team-a");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(condition(b->status, api::binding::kReleasable).reason,
            api::binding::kReasonHeldByWorkloads);
  EXPECT_NE(condition(b->status, api::binding::kReleasable).message.find("vllm-0"),
            std::string::npos);
}

// Contract §4 "Teardown": a deleting pool that no Binding names and whose domains are out of
// the ledger drops its claim on the backend, then its finalizer; then it is gone.
TEST_F(PoolControllerTest, ADeletingPoolDropsItsClaimThenItsFinalizer) {
  cluster_.create(res::kvCacheBackends(), backendObject());
  cluster_.create(res::kvCachePools(), poolObject("shared-dram"));
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  ASSERT_TRUE(api::hasFinalizer(pool("shared-dram").metadata, api::pool::kFinalizer));
  cluster_.modify(res::kvCachePools(), "shared-dram", [&](Json& object) {
    object["metadata"]["deletionTimestamp"] = kube::formatTime(clock_.wallNow());
  });
  cluster_.log().clear();
  auto outcome = pass("shared-dram");
  ASSERT_THAT(outcome, testing::IsOk());
  EXPECT_FALSE(outcome->requeue_after.has_value());
  EXPECT_THAT(cluster_.log().writes(), ElementsAre("PUT kvcachebackends/mooncake-dram/status",
                                                   "PATCH kvcachepools/shared-dram"));
  EXPECT_FALSE(cluster_.get(res::kvCachePools(), "shared-dram").has_value());
  EXPECT_THAT(
      api::backendFromJson(*cluster_.get(res::kvCacheBackends(), "mooncake-dram"))->status.used_by,
      IsEmpty());
}

// A deleting pool that a Binding still names is held (Releasable=False/HeldByBindings).
TEST_F(PoolControllerTest, ADeletingPoolIsHeldByItsBindings) {
  walkthrough();
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  cluster_.modify(res::kvCachePools(), "shared-dram", [&](Json& object) {
    object["metadata"]["deletionTimestamp"] = kube::formatTime(clock_.wallNow());
  });
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  const api::KVCachePool p = pool("shared-dram");
  EXPECT_TRUE(api::hasFinalizer(p.metadata, api::pool::kFinalizer));
  EXPECT_EQ(p.status.phase, "Deleting");
  EXPECT_EQ(condition(p.status, api::pool::kReleasable).reason, api::pool::kReasonHeldByBindings);
  EXPECT_EQ(master_.requested().count("default"), 1U);
}

// (g) An object that does not decode is a terminal error: nothing is written, and the queue
// neither retries it with backoff nor forgets it — the backstop brings it back.
TEST_F(PoolControllerTest, AnUndecodablePoolIsTerminalAndBackstopped) {
  cluster_.create(res::kvCacheBackends(), backendObject());
  Json broken = poolObject("shared-dram");
  broken["spec"]["quota"]["total"] = Json::array();
  cluster_.create(res::kvCachePools(), broken);

  auto outcome = pass("shared-dram");
  EXPECT_THAT(outcome, StatusIs(StatusCode::InvalidArgument));
  EXPECT_THAT(cluster_.log().writes(), IsEmpty());

  runtime::ControllerOptions options;
  options.name = std::string(kPoolControllerName);
  options.rate_limiter = poolRateLimiter(config_.resync, clock_);
  runtime::Controller controller(std::move(options), std::make_shared<PoolReconciler>(config_),
                                 clock_);
  controller.enqueue(runtime::Request{"", "shared-dram"});
  ASSERT_TRUE(controller.processNext());
  EXPECT_EQ(controller.queue().numRequeues("shared-dram"), 0) << "not rate-limited";
  EXPECT_EQ(controller.queue().len(), 0U);
  EXPECT_EQ(controller.queue().delayedLen(), 1U);
  clock_.advance(std::chrono::minutes(5));
  ASSERT_TRUE(testing::eventually([&] { return controller.queue().len() == 1; }));
  controller.stop();
}

// A pool that is gone leaves its deleting Bindings nothing owed: they are let go.
TEST_F(PoolControllerTest, TheDeletingBindingsOfAPoolThatIsGoneAreReleased) {
  Json orphan = bindingObject("team-a", "team-a", "shared-dram", "8Gi");
  orphan["metadata"]["finalizers"] = Json::array({std::string(api::binding::kFinalizer)});
  orphan["metadata"]["deletionTimestamp"] = kube::formatTime(clock_.wallNow());
  cluster_.create(res::kvCachePoolBindings(), orphan);
  ASSERT_THAT(pass("shared-dram"), testing::IsOk());
  EXPECT_THAT(cluster_.log().writes(), ElementsAre("PATCH kvcachepoolbindings/team-a/team-a"));
  EXPECT_FALSE(binding("team-a/team-a").has_value());
  EXPECT_THAT(master_.addressesAsked(), IsEmpty());
}

}  // namespace
}  // namespace kvc::controllers
