// The backend controller on a fake API server and a fake master (contract §2.5–§2.8, §3.1;
// issue 23 §6), through its public face only (config, reconcile(), what reaches the cluster and
// the master): an external backend observed, a managed one rendered and applied, never adopting
// an object that is not ours, torn down one step per pass with the finalizer last; and for both
// the order of the I/O, a conflict retried from a fresh read, a failed write leaving the rest
// undone, and a terminal error backstopped.
#include "kvc/controllers/backend_controller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "eventually.h"
#include "fake_apiserver.h"
#include "fake_cluster.h"
#include "fake_master.h"
#include "kvc/api/backend.h"
#include "kvc/api/backend_conditions.h"
#include "kvc/controllers/indexes.h"
#include "kvc/kube/client.h"
#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"
#include "kvc/kube/time.h"
#include "kvc/runtime/events.h"
#include "kvc/runtime/finalizer.h"
#include "kvc/runtime/owned.h"
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
namespace bc = api::backend;

constexpr const char* kExternalAdmin = "10.0.0.7:9003";
constexpr const char* kManagedAdmin = "mooncake-dram-leader.gpustack-system.svc:9003";
constexpr const char* kStoreSelector = "app.kubernetes.io/name=kv-cache-backend";
constexpr std::int64_t kGi = std::int64_t{1} << 30;

Json externalBackend() {
  return Json::parse(std::string(R"({
    "apiVersion": "worker.gpustack.ai/v1", "kind": "KVCacheBackend",
    "metadata": {"name": "remote"},
    "spec": {"type": "Mooncake", "connection": {"external": {"endpoints": [
      {"name": "Client", "address": "10.0.0.7:50051"},
      {"name": "Admin", "address": ")") +
                     kExternalAdmin + R"("}]}}}})");
}

Json managedBackend() {
  return Json::parse(R"({
    "apiVersion": "worker.gpustack.ai/v1", "kind": "KVCacheBackend",
    "metadata": {"name": "mooncake-dram"},
    "spec": {"type": "Mooncake", "connection": {"managed": {"leader": {}, "members": [
      {"nodeSelector": {"kubernetes.io/os": "linux"}, "medium": "DRAM",
       "capacityPerMember": "8Gi"}]}}}})");
}

store::Segment segment() {
  store::Segment s;
  s.segment_name = "10.0.0.5:12345";
  s.segment_id = "1-2";
  s.client_id = "3-4";
  s.te_endpoint = "10.0.0.5:12345";
  s.protocol = "tcp";
  s.status = "OK";
  s.size_bytes = 16 * kGi;
  s.allocator_used_bytes = 0;
  return s;
}

bool isMasterCall(const std::string& line) { return line.find(" master/") != std::string::npos; }

class BackendControllerTest : public ::testing::Test {
protected:
  BackendControllerTest()
      : cluster_(clock_),
        external_(kExternalAdmin, cluster_.sharedLog()),
        managed_(kManagedAdmin, cluster_.sharedLog()) {
    server_.setHandler(cluster_.handler());
    config_.client = kube::Client::create(server_.config()).value();
    config_.backends = &cluster_.cache(res::kvCacheBackends());
    config_.pools = &cluster_.cache(res::kvCachePools());
    config_.stores = [this](const StoreTarget& target) {
      targets_.push_back(target);
      const std::string& address = target.admin_address;
      return address == kExternalAdmin ? external_.clients()(address) : managed_.clients()(address);
    };
    config_.clock = &clock_;
    // The managed store's objects, cached as the setup caches them.
    config_.deployments = &cluster_.cache(res::deployments(), "gpustack-system", kStoreSelector);
    config_.daemon_sets = &cluster_.cache(res::daemonSets(), "gpustack-system", kStoreSelector);
    config_.store_pods = &cluster_.cache(res::pods(), "gpustack-system", kStoreSelector);
    config_.leases = &cluster_.cache(res::leases(), "gpustack-system");
    config_.children.push_back({res::deployments(), "gpustack-system", config_.deployments});
    config_.children.push_back({res::daemonSets(), "gpustack-system", config_.daemon_sets});
    for (const kube::ResourceType& kind :
         {res::services(), res::serviceAccounts(), res::roles(), res::roleBindings()}) {
      config_.children.push_back(
          {kind, "gpustack-system", &cluster_.cache(kind, "gpustack-system", kStoreSelector)});
    }
    config_.children.push_back(
        {res::configMaps(), "gpustack-system",
         &cluster_.cache(res::configMaps(), "gpustack-system",
                         "app.kubernetes.io/component=tenant-quota-policy")});
    external_.setSegments({segment()});
    managed_.setSegments({segment()});
  }
  ~BackendControllerTest() override {
    if (events_) {
      events_->stop();
    }
  }

  BackendReconciler& reconciler() {
    if (!reconciler_) {
      reconciler_ = std::make_shared<BackendReconciler>(config_);
    }
    return *reconciler_;
  }
  Result<runtime::Action> pass(const std::string& backend) {
    return reconciler().reconcile(runtime::Request{"", backend}, {});
  }
  // Events go to the fake cluster through a real recorder.
  void recordEvents() {
    runtime::EventRecorderOptions options;
    options.reporting_instance = "kvcache-operator-0";
    events_ = std::make_unique<runtime::EventRecorder>(config_.client, options, clock_);
    events_->start();
    config_.events = events_.get();
  }
  std::vector<std::string> eventReasons() {
    events_->flushForTest();
    std::vector<std::string> out;
    for (const Json& event : cluster_.list(res::events())) {
      out.push_back(event.value("reason", std::string()));
    }
    return out;
  }

  api::KVCacheBackend backend(const std::string& name) {
    auto object = cluster_.get(res::kvCacheBackends(), name);
    EXPECT_TRUE(object.has_value()) << name;
    return api::backendFromJson(object.value_or(Json::object())).value();
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
  // The store objects that carry this backend's ownership note.
  std::vector<std::string> ownedStoreObjects(const std::string& name) {
    const Json owner = *cluster_.get(res::kvCacheBackends(), name);
    std::vector<std::string> out;
    for (const kube::ResourceType& kind :
         {res::deployments(), res::daemonSets(), res::services(), res::serviceAccounts(),
          res::roles(), res::roleBindings(), res::configMaps(), res::networkPolicies()}) {
      for (const Json& object : cluster_.list(kind)) {
        if (runtime::carriesNoteFor(object, owner)) {
          out.push_back(kind.plural + "/" + kube::object::key(object));
        }
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  FakeClock clock_;
  FakeCluster cluster_;
  FakeApiServer server_;
  FakeMaster external_;
  FakeMaster managed_;
  std::vector<StoreTarget> targets_;  // every admin client asked for, in order
  BackendControllerConfig config_;
  std::unique_ptr<runtime::EventRecorder> events_;
  std::shared_ptr<BackendReconciler> reconciler_;
};

// ---- external -----------------------------------------------------------------------------

// Contract §2.8 and backend_controller.h: observe first — at most three reads of the master
// (/health, then /metrics and /get_segments_detail while it serves) — then the finalizer and
// the status; requeued after 15 s.
TEST_F(BackendControllerTest, AnExternalBackendIsGuardedReadAndReported) {
  cluster_.create(res::kvCacheBackends(), externalBackend());
  auto outcome = pass("remote");
  ASSERT_THAT(outcome, testing::IsOk());
  ASSERT_TRUE(outcome->requeue_after.has_value());
  EXPECT_EQ(*outcome->requeue_after, seconds(15));
  EXPECT_THAT(
      cluster_.log().filtered(
          [](const std::string& line) { return testing::isWrite(line) || isMasterCall(line); }),
      ElementsAre("GET master/health", "GET master/metrics", "GET master/get_segments_detail",
                  "PATCH kvcachebackends/remote",  // the finalizer
                  "PUT kvcachebackends/remote/status"));
  const api::KVCacheBackend b = backend("remote");
  EXPECT_TRUE(api::hasFinalizer(b.metadata, bc::kFinalizer));
  EXPECT_EQ(b.status.phase, "Ready") << b.status.phase_message;
  EXPECT_EQ(condition(b.status, bc::kLeaderAvailable).reason, bc::kReasonServing);
  EXPECT_EQ(condition(b.status, bc::kMembersMounted).reason, bc::kReasonMounted);
  EXPECT_EQ(api::endpointAddress(b.status.endpoints, api::kEndpointAdmin), kExternalAdmin);
  EXPECT_EQ(b.status.capacity_total, 16 * kGi);
  EXPECT_EQ(external_.addressesAsked(), std::vector<std::string>{kExternalAdmin});
}

TEST_F(BackendControllerTest, AnExternalBackendsCredentialIsTheSecretItsAnnotationNames) {
  Json object = externalBackend();
  cluster_.create(res::kvCacheBackends(), object);
  ASSERT_THAT(pass("remote"), testing::IsOk());
  ASSERT_FALSE(targets_.empty());
  EXPECT_EQ(targets_.back().tls_secret, "") << "none named: plain HTTP";
  object = *cluster_.get(res::kvCacheBackends(), "remote");
  object["metadata"]["annotations"][std::string(api::kAdminTlsSecretAnnotation)] = "remote-admin";
  cluster_.update(res::kvCacheBackends(), object);
  ASSERT_THAT(pass("remote"), testing::IsOk());
  EXPECT_EQ(targets_.back().admin_address, kExternalAdmin);
  EXPECT_EQ(targets_.back().tls_secret, "remote-admin");
}

TEST_F(BackendControllerTest, AnExternalMasterThatDoesNotServeIsReadOnce) {
  cluster_.create(res::kvCacheBackends(), externalBackend());
  external_.setServing(false);
  ASSERT_THAT(pass("remote"), testing::IsOk());
  EXPECT_THAT(cluster_.log().filtered(&isMasterCall), ElementsAre("GET master/health"));
  const api::KVCacheBackend b = backend("remote");
  EXPECT_EQ(condition(b.status, bc::kLeaderAvailable).reason, bc::kReasonServicePlaneNotActive);
  EXPECT_EQ(b.status.phase, "Provisioning");
  EXPECT_FALSE(b.status.capacity_total.has_value()) << "absent until the leader serves";
}

// Contract §5 "No-op passes" holds for backends too: the master is read, nothing is written.
TEST_F(BackendControllerTest, AnUnchangedExternalBackendIsReadAndLeftAlone) {
  cluster_.create(res::kvCacheBackends(), externalBackend());
  ASSERT_THAT(pass("remote"), testing::IsOk());
  cluster_.log().clear();
  ASSERT_THAT(pass("remote"), testing::IsOk());
  EXPECT_THAT(cluster_.log().writes(), IsEmpty());
  EXPECT_THAT(
      cluster_.log().filtered(&isMasterCall),
      ElementsAre("GET master/health", "GET master/metrics", "GET master/get_segments_detail"));
}

// The pool controller writes status.usedBy while this pass writes the observations: the 409 is
// retried from the fresh object, and both parts end up in the status.
TEST_F(BackendControllerTest, AConflictOnTheStatusIsRetriedFromAFreshRead) {
  cluster_.create(res::kvCachePools(), Json::parse(R"({"metadata": {"name": "shared-dram"},
      "spec": {"backends": ["remote"], "quota": {"total": "16Gi"}}})"));
  cluster_.create(res::kvCacheBackends(), externalBackend());
  cluster_.beforeNext("PUT kvcachebackends/remote/status", [&] {
    cluster_.modify(res::kvCacheBackends(), "remote", [](Json& object) {
      object["status"]["usedBy"] =
          Json::parse(R"([{"kind": "KVCachePool", "namespace": "", "name": "shared-dram"}])");
    });
  });
  ASSERT_THAT(pass("remote"), testing::IsOk());
  const auto lines = cluster_.log().lines();
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "PUT kvcachebackends/remote/status"), 2);
  const api::KVCacheBackend b = backend("remote");
  EXPECT_THAT(b.status.used_by,
              ElementsAre(api::ObjectReference{"KVCachePool", "", "shared-dram"}));
  EXPECT_EQ(condition(b.status, bc::kDeletable).reason, bc::kReasonInUse)
      << "decided from the fresh usedBy";
  EXPECT_EQ(condition(b.status, bc::kLeaderAvailable).reason, bc::kReasonServing);
}

// An unreachable master is reported (LeaderAvailable=False/LeaderUnreachable, capacity
// absent), and the pass ends as usual: the resync looks again.
TEST_F(BackendControllerTest, AnUnreachableExternalMasterIsReported) {
  cluster_.create(res::kvCacheBackends(), externalBackend());
  external_.failAlways("GET master/health",
                       store::StoreError(store::StoreErrorKind::Transport, "connection refused"));
  auto outcome = pass("remote");
  ASSERT_THAT(outcome, testing::IsOk());
  EXPECT_EQ(outcome->requeue_after, std::optional<Clock::Duration>(seconds(15)));
  const api::KVCacheBackend b = backend("remote");
  EXPECT_EQ(condition(b.status, bc::kLeaderAvailable).reason, bc::kReasonLeaderUnreachable);
  EXPECT_EQ(b.status.phase, "Error");
  EXPECT_FALSE(b.status.capacity_total.has_value());
}

// A failed finalizer patch: the master was read (observe comes first; a read changes nothing),
// and nothing after the patch is written — no status.
TEST_F(BackendControllerTest, AFailedFinalizerPatchLeavesTheRestOfThePassUndone) {
  cluster_.create(res::kvCacheBackends(), externalBackend());
  cluster_.failNext("PATCH kvcachebackends/remote", 503, "ServiceUnavailable");
  EXPECT_THAT(pass("remote"), StatusIs(StatusCode::Unavailable));
  EXPECT_THAT(cluster_.log().writes(), ElementsAre("PATCH kvcachebackends/remote"));
  EXPECT_TRUE(backend("remote").status.phase.empty());
}

// Contract §2.8 "Deletion": the finalizer holds while usedBy names a live pool (phase Deleting,
// naming it); an entry whose pool is definitely gone (a live NotFound) is dropped, and the
// finalizer goes after the status.
TEST_F(BackendControllerTest, ADeletingExternalBackendIsHeldByALivePoolAndReleasedAfter) {
  cluster_.create(res::kvCachePools(), Json::parse(R"({"metadata": {"name": "shared-dram"},
      "spec": {"backends": ["remote"], "quota": {"total": "16Gi"}}})"));
  Json object = externalBackend();
  object["metadata"]["finalizers"] = Json::array({std::string(bc::kFinalizer)});
  object["metadata"]["deletionTimestamp"] = kube::formatTime(clock_.wallNow());
  object["status"]["usedBy"] =
      Json::parse(R"([{"kind": "KVCachePool", "namespace": "", "name": "shared-dram"}])");
  cluster_.create(res::kvCacheBackends(), object);

  ASSERT_THAT(pass("remote"), testing::IsOk());
  api::KVCacheBackend b = backend("remote");
  EXPECT_TRUE(api::hasFinalizer(b.metadata, bc::kFinalizer));
  EXPECT_EQ(b.status.phase, "Deleting");
  EXPECT_NE(b.status.phase_message.find("shared-dram"), std::string::npos)
      << b.status.phase_message;
  EXPECT_EQ(condition(b.status, bc::kDeletable).reason, bc::kReasonInUse);

  cluster_.remove(res::kvCachePools(), "shared-dram");
  cluster_.log().clear();
  ASSERT_THAT(pass("remote"), testing::IsOk());
  const auto lines = cluster_.log().lines();
  EXPECT_NE(std::find(lines.begin(), lines.end(), "GET kvcachepools/shared-dram"), lines.end())
      << "a pool the cache lacks is read live before its claim is dropped";
  EXPECT_THAT(cluster_.log().writes(),
              ElementsAre("PUT kvcachebackends/remote/status", "PATCH kvcachebackends/remote"));
  EXPECT_FALSE(cluster_.get(res::kvCacheBackends(), "remote").has_value());
}

// A claim whose pool cannot be read (not a NotFound) is kept: only a definite absence drops it.
TEST_F(BackendControllerTest, APoolThatCannotBeReadStillHoldsTheBackend) {
  Json object = externalBackend();
  object["metadata"]["finalizers"] = Json::array({std::string(bc::kFinalizer)});
  object["metadata"]["deletionTimestamp"] = kube::formatTime(clock_.wallNow());
  object["status"]["usedBy"] =
      Json::parse(R"([{"kind": "KVCachePool", "namespace": "", "name": "shared-dram"}])");
  cluster_.create(res::kvCacheBackends(), object);
  cluster_.failNext("GET kvcachepools/shared-dram", 503, "ServiceUnavailable");
  (void)pass("remote");
  ASSERT_TRUE(cluster_.get(res::kvCacheBackends(), "remote").has_value());
  EXPECT_TRUE(api::hasFinalizer(backend("remote").metadata, bc::kFinalizer));
}

// An object that does not decode is terminal: nothing is written; the queue's backstop (not
// its backoff) brings it back.
TEST_F(BackendControllerTest, AnUndecodableBackendIsTerminalAndBackstopped) {
  Json broken = externalBackend();
  broken["spec"]["connection"]["external"]["endpoints"] = 7;  // not a list
  cluster_.create(res::kvCacheBackends(), broken);
  auto outcome = pass("remote");
  ASSERT_FALSE(outcome.ok());
  EXPECT_THAT(outcome.status().code(),
              ::testing::AnyOf(StatusCode::InvalidArgument, StatusCode::FailedPrecondition));
  EXPECT_THAT(cluster_.log().writes(), IsEmpty());

  runtime::ControllerOptions options;
  options.name = std::string(kBackendControllerName);
  runtime::Controller controller(std::move(options), std::make_shared<BackendReconciler>(config_),
                                 clock_);
  controller.enqueue(runtime::Request{"", "remote"});
  ASSERT_TRUE(controller.processNext());
  EXPECT_EQ(controller.queue().numRequeues("remote"), 0);
  EXPECT_EQ(controller.queue().delayedLen(), 1U);
  clock_.advance(std::chrono::minutes(5));
  ASSERT_TRUE(testing::eventually([&] { return controller.queue().len() == 1; }));
  controller.stop();
}

// ---- managed ------------------------------------------------------------------------------

// Contract §3.1: the finalizer, then every rendered object applied server-side with the owner
// reference and the note, then the master read through the leader Service, then the status.
TEST_F(BackendControllerTest, AManagedBackendIsRenderedAppliedThenObserved) {
  cluster_.create(res::kvCacheBackends(), managedBackend());
  auto outcome = pass("mooncake-dram");
  ASSERT_THAT(outcome, testing::IsOk());
  const auto io = cluster_.log().filtered(
      [](const std::string& line) { return testing::isWrite(line) || isMasterCall(line); });
  ASSERT_GE(io.size(), 4U);
  EXPECT_EQ(io.front(), "PATCH kvcachebackends/mooncake-dram");
  EXPECT_EQ(io.back(), "PUT kvcachebackends/mooncake-dram/status");
  const auto first_master = std::find_if(io.begin(), io.end(), isMasterCall);
  ASSERT_NE(first_master, io.end());
  ASSERT_GT(first_master - io.begin(), 0) << "the master is read after the converge";
  EXPECT_EQ(*first_master, "GET master/health");
  std::set<std::string> applied;
  const std::string seed = "configmaps/gpustack-system/mooncake-dram-tenant-quota-policy";
  for (auto it = io.begin() + 1; it != first_master; ++it) {
    if (*it == "CREATE " + seed) {
      EXPECT_EQ(it + 1, first_master) << "the policy seed is created after the applies";
      applied.insert("APPLY " + seed);
      continue;
    }
    EXPECT_EQ(it->rfind("APPLY ", 0), 0U) << *it
                                          << ": only applies (and the policy seed) between the "
                                             "finalizer and the first read of the master";
    applied.insert(*it);
  }
  EXPECT_EQ(applied.count("APPLY " + seed), 1U) << "the tenant-quota policy is seeded";
  for (const char* expected : {"APPLY deployments/gpustack-system/mooncake-dram-leader",
                               "APPLY services/gpustack-system/mooncake-dram-leader",
                               "APPLY daemonsets/gpustack-system/mooncake-dram-member-0"}) {
    EXPECT_EQ(applied.count(expected), 1U) << expected;
  }
  for (const std::string& object : ownedStoreObjects("mooncake-dram")) {
    EXPECT_EQ(applied.count("APPLY " + object), 1U) << object << " carries the note";
  }
  const auto leader = cluster_.get(res::deployments(), "gpustack-system/mooncake-dram-leader");
  ASSERT_TRUE(leader.has_value());
  EXPECT_EQ((*leader)["metadata"]["ownerReferences"][0]["name"], "mooncake-dram");
  EXPECT_EQ((*leader)["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(managed_.addressesAsked(), std::vector<std::string>{kManagedAdmin});
  const api::KVCacheBackend b = backend("mooncake-dram");
  EXPECT_TRUE(api::hasFinalizer(b.metadata, bc::kFinalizer));
  EXPECT_EQ(api::endpointAddress(b.status.endpoints, api::kEndpointAdmin), kManagedAdmin);
  EXPECT_FALSE(b.status.phase.empty());
}

// Issue 26 §4: each move of the master's Lease to another holder counts once in
// kvcache_backend_leader_handovers_total{backend}, which exists at 0 from the backend's first pass
// (so that increase() sees the first handover), and nothing else counts.
TEST_F(BackendControllerTest, ALeaseHandoverIsCountedPerBackend) {
  runtime::Registry metrics;
  config_.metrics = &metrics;
  cluster_.create(res::kvCacheBackends(), managedBackend());
  const auto lease = [](const std::string& holder, int transitions) {
    return Json{{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", {{"name", "mooncake-dram-leader"}, {"namespace", "gpustack-system"}}},
                {"spec", {{"holderIdentity", holder}, {"leaseTransitions", transitions}}}};
  };
  const std::string series = "kvcache_backend_leader_handovers_total{backend=\"mooncake-dram\"} ";
  cluster_.create(res::leases(), lease("leader-a", 0));
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  EXPECT_NE(metrics.render().find(series + "0\n"), std::string::npos) << metrics.render();
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  EXPECT_NE(metrics.render().find(series + "0\n"), std::string::npos) << "the same holder";
  cluster_.update(res::leases(), lease("leader-b", 1));
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  EXPECT_NE(metrics.render().find(series + "1\n"), std::string::npos) << metrics.render();
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  EXPECT_NE(metrics.render().find(series + "1\n"), std::string::npos) << "counted once";
}

// Contract §3.4 (issue 27 §4): a managed multi-tenant backend's policy seed exists before any
// pool uses it — `version: 1` with no tenants, owned by the backend like its other objects — so
// a master that starts (or fails over) first reads a ConfigMap that exists.
TEST_F(BackendControllerTest, AManagedBackendSeedsItsTenantPolicyBeforeAnyPool) {
  cluster_.create(res::kvCacheBackends(), managedBackend());
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  const auto seed =
      cluster_.get(res::configMaps(), "gpustack-system/mooncake-dram-tenant-quota-policy");
  ASSERT_TRUE(seed.has_value());
  EXPECT_EQ((*seed)["data"]["tenant-quota-policy.yaml"], "version: 1\ntenants: []\n");
  EXPECT_EQ((*seed)["metadata"]["ownerReferences"][0]["name"], "mooncake-dram");
  EXPECT_TRUE(
      runtime::carriesNoteFor(*seed, *cluster_.get(res::kvCacheBackends(), "mooncake-dram")));
}

// The seed is created once and never rewritten: the policy the pool controller rendered into it
// (or anyone's same-named ConfigMap, which the pool controller reports) is left as it is.
TEST_F(BackendControllerTest, AnExistingTenantPolicyIsNeverRewrittenByTheSeed) {
  const Json foreign = cluster_.create(res::configMaps(), Json::parse(R"({
      "metadata": {"namespace": "gpustack-system", "name": "mooncake-dram-tenant-quota-policy"},
      "data": {"tenant-quota-policy.yaml": "version: 1\ntenants:\n  - name: \"default\"\n    quota: 1\n"}})"));
  cluster_.create(res::kvCacheBackends(), managedBackend());
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  EXPECT_EQ(cluster_.get(res::configMaps(), "gpustack-system/mooncake-dram-tenant-quota-policy"),
            foreign);
}

// No ledger, no policy: a managed backend with multiTenancy false is not seeded.
TEST_F(BackendControllerTest, ASingleTenantManagedBackendHasNoTenantPolicy) {
  Json single = managedBackend();
  single["spec"]["connection"]["managed"]["leader"]["multiTenancy"] = false;
  cluster_.create(res::kvCacheBackends(), single);
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  EXPECT_FALSE(cluster_.get(res::configMaps(), "gpustack-system/mooncake-dram-tenant-quota-policy"))
      << "not seeded";
}

// A second pass over what the first applied sends nothing to the API server (the caches hold
// every intent) and reads the master again.
TEST_F(BackendControllerTest, AnUnchangedManagedBackendIsLeftAlone) {
  cluster_.create(res::kvCacheBackends(), managedBackend());
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  cluster_.log().clear();
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  EXPECT_THAT(cluster_.log().writes(), IsEmpty());
  EXPECT_FALSE(cluster_.log().filtered(&isMasterCall).empty());
}

// Contract §3.1 "Ownership": a same-named object without our note is never adopted — the
// refusal comes before any apply, so nothing of the store is written, and the foreign object is
// untouched. The status is still written, a RenderFailed event says why, and the error (the user
// has to act) is terminal.
TEST_F(BackendControllerTest, AnObjectThatIsNotOursIsNeverAdopted) {
  recordEvents();
  const Json foreign = cluster_.create(res::deployments(), Json::parse(R"({
      "metadata": {"namespace": "gpustack-system", "name": "mooncake-dram-leader"},
      "spec": {"replicas": 3}})"));
  cluster_.create(res::kvCacheBackends(), managedBackend());
  auto outcome = pass("mooncake-dram");
  EXPECT_THAT(outcome, StatusIs(StatusCode::FailedPrecondition,
                                ::testing::HasSubstr("mooncake-dram-leader")));
  EXPECT_THAT(cluster_.log().filtered([](const std::string& line) {
    return line.rfind("APPLY ", 0) == 0 || line.rfind("DELETE ", 0) == 0;
  }),
              IsEmpty());
  EXPECT_EQ(cluster_.get(res::deployments(), "gpustack-system/mooncake-dram-leader"), foreign);
  EXPECT_THAT(ownedStoreObjects("mooncake-dram"), IsEmpty());
  EXPECT_FALSE(backend("mooncake-dram").status.phase.empty()) << "the status still reports";
  const auto reasons = eventReasons();
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "RenderFailed"), reasons.end());
}

// A failed apply stops the convergence there: the store objects after it are not applied. The
// status still reports what runs, and the error is retried.
TEST_F(BackendControllerTest, AFailedApplyLeavesTheRemainingObjectsUnapplied) {
  cluster_.create(res::kvCacheBackends(), managedBackend());
  cluster_.failNext("APPLY deployments/gpustack-system/mooncake-dram-leader", 500);
  auto outcome = pass("mooncake-dram");
  EXPECT_THAT(outcome, StatusIs(StatusCode::Unavailable));
  const auto applies =
      cluster_.log().filtered([](const std::string& line) { return line.rfind("APPLY ", 0) == 0; });
  ASSERT_FALSE(applies.empty());
  EXPECT_EQ(applies.back(), "APPLY deployments/gpustack-system/mooncake-dram-leader")
      << "nothing is applied after the failure";
  EXPECT_FALSE(cluster_.get(res::deployments(), "gpustack-system/mooncake-dram-leader"));
  EXPECT_FALSE(cluster_.get(res::daemonSets(), "gpustack-system/mooncake-dram-member-0"));
}

// The seed's Troubleshooting row "Member Pod stuck — FailedMount … hostPath type check failed"
// (issue 27 §2): a member Pod Pending on the tier's missing directory shows only
// ContainerCreating; the kubelet's FailedMount Event about it (this Pod, by uid) names the Pod,
// the hostPath and the fix in MembersMounted. An Event about an earlier Pod of that name is not
// this Pod's.
TEST_F(BackendControllerTest, AMemberPodWaitingOnAMountIsNamedFromTheKubeletsEvent) {
  runtime::Store& events = cluster_.cache(res::events(), "gpustack-system");
  events.addIndex(kEventsByObject, &eventObject);
  config_.mount_failures = &events;
  managed_.setSegments({});
  cluster_.create(res::kvCacheBackends(), managedBackend());
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  // On the current template (an older one would be deleted).
  const std::string hash =
      cluster_.get(res::daemonSets(), "gpustack-system/mooncake-dram-member-0")
          ->value(Json::json_pointer(
                      "/spec/template/metadata/annotations/kvcache.gpustack.ai~1pod-spec-hash"),
                  std::string());
  Json pending = Json::parse(R"({
      "metadata": {"namespace": "gpustack-system", "name": "mooncake-dram-member-0-aaaaa",
        "labels": {"app.kubernetes.io/name": "kv-cache-backend",
                   "app.kubernetes.io/instance": "mooncake-dram",
                   "app.kubernetes.io/component": "member-0"}},
      "spec": {"nodeName": "real-node-0", "securityContext": {"runAsUser": 65532},
        "volumes": [{"name": "local-disk",
                     "hostPath": {"path": "/var/lib/kvcache", "type": "Directory"}}]},
      "status": {"phase": "Pending", "containerStatuses": [{"name": "member", "ready": false,
        "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}]}})");
  pending["metadata"]["annotations"]["kvcache.gpustack.ai/pod-spec-hash"] = hash;
  const Json pod = cluster_.create(res::pods(), pending);
  const auto event = [&](const std::string& name, const std::string& uid, const std::string& note) {
    cluster_.create(res::events(),
                    Json{{"metadata", {{"namespace", "gpustack-system"}, {"name", name}}},
                         {"regarding",
                          {{"kind", "Pod"},
                           {"namespace", "gpustack-system"},
                           {"name", "mooncake-dram-member-0-aaaaa"},
                           {"uid", uid}}},
                         {"reason", "FailedMount"},
                         {"note", note}});
  };
  event("earlier", "another-uid", "MountVolume.SetUp failed for volume \"local-disk\" : earlier");
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  EXPECT_EQ(condition(backend("mooncake-dram").status, bc::kMembersMounted).reason,
            bc::kReasonNoSegments)
      << "an Event about another Pod of that name says nothing of this one";

  event("now", kube::object::uid(pod),
        "MountVolume.SetUp failed for volume \"local-disk\" : hostPath type check failed: "
        "/var/lib/kvcache is not a directory");
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  const api::KVCacheBackend b = backend("mooncake-dram");
  const api::Condition& mounted = condition(b.status, bc::kMembersMounted);
  EXPECT_EQ(mounted.reason, "FailedMount");
  EXPECT_THAT(mounted.message, ::testing::HasSubstr("Pod mooncake-dram-member-0-aaaaa"));
  EXPECT_THAT(mounted.message,
              ::testing::HasSubstr("install -d -o 65532 -g 0 -m 0750 /var/lib/kvcache"));
  EXPECT_EQ(b.status.phase, "Degraded");
}

// Contract §3.5: the member DaemonSets are OnDelete, so a member Pod whose pod-spec hash
// differs from its group's template is deleted (guarded by its uid); a current one is kept.
TEST_F(BackendControllerTest, AMemberPodOnAnOlderTemplateIsDeleted) {
  cluster_.create(res::kvCacheBackends(), managedBackend());
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  const Json daemon_set =
      *cluster_.get(res::daemonSets(), "gpustack-system/mooncake-dram-member-0");
  const std::string current = daemon_set.value(
      Json::json_pointer("/spec/template/metadata/annotations/kvcache.gpustack.ai~1pod-spec-hash"),
      std::string());
  ASSERT_FALSE(current.empty());
  auto member = [&](const std::string& name, const std::string& hash) {
    cluster_.create(res::pods(),
                    Json{{"metadata",
                          {{"namespace", "gpustack-system"},
                           {"name", name},
                           {"labels",
                            {{"app.kubernetes.io/name", "kv-cache-backend"},
                             {"app.kubernetes.io/instance", "mooncake-dram"},
                             {"app.kubernetes.io/component", "member-0"}}},
                           {"annotations", {{"kvcache.gpustack.ai/pod-spec-hash", hash}}}}},
                         {"status", {{"phase", "Running"}}}});
  };
  member("mooncake-dram-member-0-old", "0123456789abcdef");
  member("mooncake-dram-member-0-new", current);
  cluster_.log().clear();
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  const auto writes = cluster_.log().writes();
  EXPECT_THAT(writes,
              ::testing::Contains("DELETE pods/gpustack-system/mooncake-dram-member-0-old"));
  EXPECT_THAT(writes, ::testing::Not(::testing::Contains(
                          "DELETE pods/gpustack-system/mooncake-dram-member-0-new")));
  EXPECT_FALSE(cluster_.get(res::pods(), "gpustack-system/mooncake-dram-member-0-old"));
  EXPECT_TRUE(cluster_.get(res::pods(), "gpustack-system/mooncake-dram-member-0-new"));
}

// A 409 on the managed status (the pool controller claimed the backend meanwhile): retried from
// the fresh object, keeping the claim.
TEST_F(BackendControllerTest, AConflictOnTheManagedStatusIsRetriedFromAFreshRead) {
  cluster_.create(res::kvCachePools(), Json::parse(R"({"metadata": {"name": "shared-dram"},
      "spec": {"backends": ["mooncake-dram"], "quota": {"total": "16Gi"}}})"));
  cluster_.create(res::kvCacheBackends(), managedBackend());
  cluster_.beforeNext("PUT kvcachebackends/mooncake-dram/status", [&] {
    cluster_.modify(res::kvCacheBackends(), "mooncake-dram", [](Json& object) {
      object["status"]["usedBy"] =
          Json::parse(R"([{"kind": "KVCachePool", "namespace": "", "name": "shared-dram"}])");
    });
  });
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  const auto lines = cluster_.log().lines();
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "PUT kvcachebackends/mooncake-dram/status"), 2);
  const api::KVCacheBackend b = backend("mooncake-dram");
  EXPECT_THAT(b.status.used_by,
              ElementsAre(api::ObjectReference{"KVCachePool", "", "shared-dram"}));
  EXPECT_EQ(condition(b.status, bc::kDeletable).reason, bc::kReasonInUse);
}

// Contract §2.8 "Deletion": once no pool uses it, the store is torn down one step per pass —
// every object carrying the note deleted in the foreground (its NetworkPolicies once nothing else
// is left), then waited for (polled every teardown_poll), then the Lease, and the finalizer last.
TEST_F(BackendControllerTest, AManagedBackendIsTornDownOneStepPerPassWithTheFinalizerLast) {
  cluster_.create(res::kvCacheBackends(), managedBackend());
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  const std::vector<std::string> owned = ownedStoreObjects("mooncake-dram");
  ASSERT_FALSE(owned.empty());
  // A store object of someone else's, with the store's labels: never deleted.
  cluster_.create(res::services(), Json::parse(R"({"metadata": {"namespace": "gpustack-system",
      "name": "mooncake-dram-dashboard", "labels": {"app.kubernetes.io/name": "kv-cache-backend",
      "app.kubernetes.io/instance": "mooncake-dram"}}})"));
  cluster_.modify(res::kvCacheBackends(), "mooncake-dram", [&](Json& object) {
    object["metadata"]["deletionTimestamp"] = kube::formatTime(clock_.wallNow());
  });

  const auto is_policy = [](const std::string& object) {
    return object.rfind("networkpolicies/", 0) == 0;
  };
  std::set<std::string> policies;
  std::set<std::string> workloads;
  for (const std::string& object : owned) {
    (is_policy(object) ? policies : workloads).insert(object);
  }
  ASSERT_EQ(policies.size(), 2U) << "the leader's and the member group's";
  // remove(objects): the garbage collector finishes their deletion.
  const auto remove = [this](const std::set<std::string>& objects) {
    for (const std::string& object : objects) {
      const auto slash = object.find('/');
      const std::string plural = object.substr(0, slash);
      for (const kube::ResourceType& kind : res::all()) {
        if (kind.plural == plural && kind.group != "events.k8s.io") {
          cluster_.remove(kind, object.substr(slash + 1));
        }
      }
    }
  };
  const auto deletes = [this] {
    std::set<std::string> deleted;
    for (const std::string& line : cluster_.log().writes()) {
      if (line.rfind("DELETE ", 0) == 0) {
        deleted.insert(line.substr(7));
      }
    }
    return deleted;
  };

  // Pass 1: every owned object but the policies is deleted in the foreground; the finalizer
  // stays.
  cluster_.log().clear();
  auto first = pass("mooncake-dram");
  ASSERT_THAT(first, testing::IsOk());
  ASSERT_TRUE(first->requeue_after.has_value());
  EXPECT_EQ(*first->requeue_after, config_.teardown_poll);
  EXPECT_EQ(deletes(), workloads);
  EXPECT_EQ(cluster_.log().writes().back(), "PUT kvcachebackends/mooncake-dram/status");
  api::KVCacheBackend b = backend("mooncake-dram");
  EXPECT_TRUE(api::hasFinalizer(b.metadata, bc::kFinalizer));
  EXPECT_EQ(b.status.phase, "Deleting");
  EXPECT_TRUE(cluster_.get(res::services(), "gpustack-system/mooncake-dram-dashboard"));

  // Pass 2: the objects are still going (their Pods first): nothing is deleted again.
  cluster_.log().clear();
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  EXPECT_THAT(cluster_.log().filtered([](const std::string& line) {
    return line.rfind("DELETE ", 0) == 0 || line.rfind("PATCH ", 0) == 0;
  }),
              IsEmpty());
  EXPECT_TRUE(api::hasFinalizer(backend("mooncake-dram").metadata, bc::kFinalizer));

  // The garbage collector finishes; pass 3 deletes the policies, nothing else is left to guard.
  remove(workloads);
  cluster_.log().clear();
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  EXPECT_EQ(deletes(), policies);
  EXPECT_TRUE(api::hasFinalizer(backend("mooncake-dram").metadata, bc::kFinalizer));

  // They go; pass 4 deletes the Lease and removes the finalizer, last.
  remove(policies);
  cluster_.log().clear();
  auto last = pass("mooncake-dram");
  ASSERT_THAT(last, testing::IsOk());
  const auto writes = cluster_.log().writes();
  ASSERT_FALSE(writes.empty());
  EXPECT_EQ(writes.front(), "DELETE leases/gpustack-system/mooncake-dram-leader");
  EXPECT_EQ(writes.back(), "PATCH kvcachebackends/mooncake-dram");
  EXPECT_FALSE(cluster_.get(res::kvCacheBackends(), "mooncake-dram").has_value());
  EXPECT_TRUE(cluster_.get(res::services(), "gpustack-system/mooncake-dram-dashboard"));
}

// A deleting managed backend that a pool still uses keeps converging; nothing is torn down.
TEST_F(BackendControllerTest, ADeletingManagedBackendThatAPoolUsesIsNotTornDown) {
  cluster_.create(res::kvCachePools(), Json::parse(R"({"metadata": {"name": "shared-dram"},
      "spec": {"backends": ["mooncake-dram"], "quota": {"total": "16Gi"}}})"));
  cluster_.create(res::kvCacheBackends(), managedBackend());
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  cluster_.modify(res::kvCacheBackends(), "mooncake-dram", [&](Json& object) {
    object["metadata"]["deletionTimestamp"] = kube::formatTime(clock_.wallNow());
    object["status"]["usedBy"] =
        Json::parse(R"([{"kind": "KVCachePool", "namespace": "", "name": "shared-dram"}])");
  });
  cluster_.log().clear();
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  EXPECT_THAT(cluster_.log().filtered(
                  [](const std::string& line) { return line.rfind("DELETE ", 0) == 0; }),
              IsEmpty());
  const api::KVCacheBackend b = backend("mooncake-dram");
  EXPECT_EQ(b.status.phase, "Deleting");
  EXPECT_NE(b.status.phase_message.find("shared-dram"), std::string::npos);
  EXPECT_TRUE(api::hasFinalizer(b.metadata, bc::kFinalizer));
}

// A failed foreground delete in the teardown: the finalizer stays and the error is retried.
TEST_F(BackendControllerTest, AFailedTeardownDeleteKeepsTheFinalizer) {
  cluster_.create(res::kvCacheBackends(), managedBackend());
  ASSERT_THAT(pass("mooncake-dram"), testing::IsOk());
  cluster_.modify(res::kvCacheBackends(), "mooncake-dram", [&](Json& object) {
    object["metadata"]["deletionTimestamp"] = kube::formatTime(clock_.wallNow());
  });
  cluster_.failNext("DELETE deployments/gpustack-system/mooncake-dram-leader", 503,
                    "ServiceUnavailable");
  EXPECT_THAT(pass("mooncake-dram"), StatusIs(StatusCode::Unavailable));
  EXPECT_TRUE(api::hasFinalizer(backend("mooncake-dram").metadata, bc::kFinalizer));
  const auto writes = cluster_.log().writes();
  EXPECT_EQ(std::count(writes.begin(), writes.end(), "PATCH kvcachebackends/mooncake-dram"), 1)
      << "only the first pass's finalizer";
}

}  // namespace
}  // namespace kvc::controllers
