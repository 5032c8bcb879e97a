// The ModelDeployment controller on a fake API server (contract §8; issue 23 §6), through its
// public face only (config, reconcile(), what reaches the cluster): the finalizer first; the
// role Deployments applied, the deployment noted in its Binding's status.usedBy, then its own
// status; a same-named Deployment that is not ours never adopted (RenderFailed); the teardown
// waiting for the role Pods before the Binding is let go and the finalizer removed; and the
// order of the I/O, a conflict retried from a fresh read, a failed write leaving the rest
// undone, a terminal error backstopped.
#include "kvc/controllers/model_deployment_controller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "eventually.h"
#include "fake_apiserver.h"
#include "fake_cluster.h"
#include "kvc/api/binding.h"
#include "kvc/api/model_deployment.h"
#include "kvc/api/model_deployment_conditions.h"
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
using kvc::testing::StatusIs;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

namespace res = kube::resources;
namespace mdc = api::model_deployment;

constexpr const char* kMd = "team-a/qwen-chat";
constexpr const char* kRoleDeployment = "team-a/qwen-chat-server";

Json backendObject() {
  return Json::parse(R"({
    "metadata": {"name": "mooncake-dram"},
    "spec": {"type": "Mooncake", "connection": {"managed": {"leader": {}, "members": [
      {"nodeSelector": {"kubernetes.io/os": "linux"}, "medium": "DRAM",
       "capacityPerMember": "8Gi"}]}}},
    "status": {"endpoints": [
      {"name": "Client", "address": "mooncake-dram-leader.gpustack-system.svc:50051"},
      {"name": "Admin", "address": "mooncake-dram-leader.gpustack-system.svc:9003"}]}})");
}

// A pool that admits injection: the ledger available, the client endpoint published.
Json poolObject() {
  return Json::parse(R"({
    "metadata": {"name": "shared-dram"},
    "spec": {"backends": ["mooncake-dram"], "quota": {"total": "16Gi"}},
    "status": {"clientEndpoint": "mooncake-dram-leader.gpustack-system.svc:50051",
      "conditions": [{"type": "BackendResolved", "status": "True", "reason": "Resolved",
                      "message": "", "lastTransitionTime": "2023-11-14T22:13:20Z"},
                     {"type": "QuotaLedgerAvailable", "status": "True", "reason": "Available",
                      "message": "", "lastTransitionTime": "2023-11-14T22:13:20Z"}]}})");
}

Json bindingObject() {
  return Json::parse(R"({
    "metadata": {"namespace": "team-a", "name": "team-a",
                 "finalizers": ["worker.gpustack.ai/kvcache-pool-binding"]},
    "spec": {"poolRef": {"name": "shared-dram"}, "quota": {"ceiling": "8Gi"},
             "domain": {"name": "default", "blockSize": 64, "dtype": "bfloat16"}},
    "status": {"requestedQuota": "8Gi", "effectiveQuota": "8Gi"}})");
}

// The walkthrough's Step 3: vLLM, one Server role, attached to Binding team-a.
Json modelDeploymentObject() {
  return Json::parse(R"({
    "metadata": {"namespace": "team-a", "name": "qwen-chat"},
    "spec": {"model": {"name": "Qwen/Qwen2.5-7B-Instruct"},
             "engine": {"name": "vLLM", "image": "gpustack/runner:cuda13.0-vllm0.29.0"},
             "kvCache": {"poolRef": {"name": "team-a"}},
             "roles": [{"name": "server", "replicas": 1, "resources": {"accelerator": "1"}}]}})");
}

class ModelDeploymentControllerTest : public ::testing::Test {
protected:
  ModelDeploymentControllerTest() : cluster_(clock_) {
    server_.setHandler(cluster_.handler());
    config_.client = kube::Client::create(server_.config()).value();
    runtime::Store& deployments = cluster_.cache(res::modelDeployments());
    deployments.addIndex(kModelDeploymentsByBinding, &modelDeploymentBinding);
    config_.deployments = &deployments;
    config_.workloads = &cluster_.cache(res::deployments(), "", roleWorkloadSelector());
    config_.services = &cluster_.cache(res::services(), "", roleWorkloadSelector());
    runtime::Store& replicas = cluster_.cache(res::pods(), "", roleWorkloadSelector());
    replicas.addIndex(kReplicasByDeployment, &replicaDeployment);
    config_.replicas = &replicas;
    config_.bindings = &cluster_.cache(res::kvCachePoolBindings());
    config_.pools = &cluster_.cache(res::kvCachePools());
    config_.backends = &cluster_.cache(res::kvCacheBackends());
    config_.clock = &clock_;
    cluster_.create(res::kvCacheBackends(), backendObject());
    cluster_.create(res::kvCachePools(), poolObject());
    cluster_.create(res::kvCachePoolBindings(), bindingObject());
  }
  ~ModelDeploymentControllerTest() override {
    if (events_) {
      events_->stop();
    }
  }

  ModelDeploymentReconciler& reconciler() {
    if (!reconciler_) {
      reconciler_ = std::make_shared<ModelDeploymentReconciler>(config_);
    }
    return *reconciler_;
  }
  Result<runtime::Action> pass() {
    return reconciler().reconcile(runtime::Request{"team-a", "qwen-chat"}, {});
  }
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
  // A created deployment past its first pass (the finalizer added).
  void created() {
    cluster_.create(res::modelDeployments(), modelDeploymentObject());
    ASSERT_THAT(pass(), testing::IsOk());
  }

  std::optional<api::ModelDeployment> md() {
    auto object = cluster_.get(res::modelDeployments(), kMd);
    if (!object) {
      return std::nullopt;
    }
    return api::modelDeploymentFromJson(*object).value();
  }
  api::KVCachePoolBinding binding() {
    return api::bindingFromJson(*cluster_.get(res::kvCachePoolBindings(), "team-a/team-a")).value();
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
  std::vector<std::string> applies() {
    return cluster_.log().filtered(
        [](const std::string& line) { return line.rfind("APPLY ", 0) == 0; });
  }

  FakeClock clock_;
  FakeCluster cluster_;
  FakeApiServer server_;
  ModelDeploymentControllerConfig config_;
  std::unique_ptr<runtime::EventRecorder> events_;
  std::shared_ptr<ModelDeploymentReconciler> reconciler_;
};

// runtime/finalizer.h: the first pass adds the finalizer and nothing else.
TEST_F(ModelDeploymentControllerTest, TheFirstPassAddsTheFinalizerOnly) {
  cluster_.create(res::modelDeployments(), modelDeploymentObject());
  ASSERT_THAT(pass(), testing::IsOk());
  EXPECT_THAT(cluster_.log().writes(), ElementsAre("PATCH modeldeployments/team-a/qwen-chat"));
  EXPECT_TRUE(api::hasFinalizer(md()->metadata, mdc::kFinalizer));
}

// model_deployment_controller.h steps 3–6: the role Deployment (and the Service fronting
// Server roles) applied as our children, the deployment noted in its Binding's usedBy, then the
// status; requeued after the resync.
TEST_F(ModelDeploymentControllerTest, RolesAreAppliedTheBindingIsNotedThenTheStatusWritten) {
  created();
  cluster_.log().clear();
  auto outcome = pass();
  ASSERT_THAT(outcome, testing::IsOk());
  ASSERT_TRUE(outcome->requeue_after.has_value());
  EXPECT_EQ(*outcome->requeue_after, config_.resync);

  const auto writes = cluster_.log().writes();
  ASSERT_GE(writes.size(), 3U);
  EXPECT_EQ(writes[writes.size() - 2], "PUT kvcachepoolbindings/team-a/team-a/status");
  EXPECT_EQ(writes.back(), "PUT modeldeployments/team-a/qwen-chat/status");
  for (std::size_t i = 0; i + 2 < writes.size(); ++i) {
    EXPECT_EQ(writes[i].rfind("APPLY ", 0), 0U) << writes[i];
  }
  const auto applied = applies();
  EXPECT_NE(std::find(applied.begin(), applied.end(), "APPLY deployments/team-a/qwen-chat-server"),
            applied.end());

  const auto role = cluster_.get(res::deployments(), kRoleDeployment);
  ASSERT_TRUE(role.has_value());
  const Json owner = *cluster_.get(res::modelDeployments(), kMd);
  EXPECT_TRUE(runtime::carriesNoteFor(*role, owner));
  EXPECT_EQ((*role)["metadata"]["ownerReferences"][0]["uid"], owner["metadata"]["uid"]);

  EXPECT_THAT(binding().status.used_by,
              ElementsAre(api::ObjectReference{"ModelDeployment", "", "qwen-chat"}));
  EXPECT_EQ(binding().status.effective_quota, std::int64_t{8} << 30)
      << "the pool controller's part is kept";
  const auto d = md();
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->status.phase.empty());
  ASSERT_TRUE(d->status.kv_cache.has_value());
  EXPECT_EQ(d->status.kv_cache->binding, "team-a");
  EXPECT_EQ(d->status.kv_cache->pool, "shared-dram");
  EXPECT_NE(condition(d->status, mdc::kCacheAttached).reason, mdc::kReasonRenderFailed);
}

TEST_F(ModelDeploymentControllerTest, AnUnchangedDeploymentIsLeftAlone) {
  created();
  ASSERT_THAT(pass(), testing::IsOk());
  cluster_.log().clear();
  ASSERT_THAT(pass(), testing::IsOk());
  EXPECT_THAT(cluster_.log().writes(), IsEmpty());
}

// Contract §3.1/§8 and runtime/owned.h: a same-named Deployment that is not ours is never
// adopted. Nothing is applied, the foreign object is untouched, and the status says RenderFailed
// (with the Event) and why.
TEST_F(ModelDeploymentControllerTest, ASameNamedDeploymentThatIsNotOursIsNeverAdopted) {
  recordEvents();
  const Json foreign = cluster_.create(res::deployments(), Json::parse(R"({
      "metadata": {"namespace": "team-a", "name": "qwen-chat-server"},
      "spec": {"replicas": 5}})"));
  created();
  cluster_.log().clear();
  ASSERT_THAT(pass(), testing::IsOk());
  EXPECT_THAT(applies(), IsEmpty());
  EXPECT_EQ(cluster_.get(res::deployments(), kRoleDeployment), foreign);
  const auto d = md();
  ASSERT_TRUE(d.has_value());
  const api::Condition& attached = condition(d->status, mdc::kCacheAttached);
  EXPECT_EQ(attached.reason, mdc::kReasonRenderFailed);
  EXPECT_NE(attached.message.find("qwen-chat-server"), std::string::npos) << attached.message;
  EXPECT_EQ(condition(d->status, mdc::kReplicasUpToDate).reason, mdc::kReasonRenderFailed);
  const auto reasons = eventReasons();
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), mdc::kEventRenderFailed), reasons.end());
}

// A failed apply: the Binding is not noted and no status is written; the error is retried.
TEST_F(ModelDeploymentControllerTest, AFailedApplyLeavesTheBindingAndTheStatusUntouched) {
  created();
  cluster_.failNext("APPLY deployments/team-a/qwen-chat-server", 500);
  cluster_.log().clear();
  EXPECT_THAT(pass(), StatusIs(StatusCode::Unavailable));
  const auto writes = cluster_.log().writes();
  ASSERT_FALSE(writes.empty());
  EXPECT_EQ(writes.back(), "APPLY deployments/team-a/qwen-chat-server");
  EXPECT_THAT(binding().status.used_by, IsEmpty());
  EXPECT_TRUE(md()->status.phase.empty());
}

// A failed note on the Binding: the deployment's status is not written.
TEST_F(ModelDeploymentControllerTest, AFailedBindingNoteLeavesTheStatusUnwritten) {
  created();
  cluster_.failNext("PUT kvcachepoolbindings/team-a/team-a/status", 503, "ServiceUnavailable");
  EXPECT_THAT(pass(), StatusIs(StatusCode::Unavailable));
  EXPECT_EQ(cluster_.log().writes().back(), "PUT kvcachepoolbindings/team-a/team-a/status");
  EXPECT_TRUE(md()->status.phase.empty());
}

// The pool controller writes the Binding's figures while this pass notes usedBy: the 409 is
// retried from the fresh object, and both parts are kept.
TEST_F(ModelDeploymentControllerTest, AConflictOnTheBindingIsRetriedFromAFreshRead) {
  created();
  cluster_.beforeNext("PUT kvcachepoolbindings/team-a/team-a/status", [&] {
    cluster_.modify(res::kvCachePoolBindings(), "team-a/team-a",
                    [](Json& object) { object["status"]["effectiveQuota"] = "6Gi"; });
  });
  ASSERT_THAT(pass(), testing::IsOk());
  const auto lines = cluster_.log().lines();
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "PUT kvcachepoolbindings/team-a/team-a/status"),
            2);
  const api::KVCachePoolBinding b = binding();
  EXPECT_THAT(b.status.used_by,
              ElementsAre(api::ObjectReference{"ModelDeployment", "", "qwen-chat"}));
  EXPECT_EQ(b.status.effective_quota, std::int64_t{6} << 30);
}

// A 409 on the deployment's own status (its labels changed meanwhile) is retried too.
TEST_F(ModelDeploymentControllerTest, AConflictOnTheStatusIsRetriedFromAFreshRead) {
  created();
  cluster_.beforeNext("PUT modeldeployments/team-a/qwen-chat/status", [&] {
    cluster_.modify(res::modelDeployments(), kMd,
                    [](Json& object) { object["metadata"]["labels"]["tier"] = "gold"; });
  });
  ASSERT_THAT(pass(), testing::IsOk());
  const auto lines = cluster_.log().lines();
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "PUT modeldeployments/team-a/qwen-chat/status"),
            2);
  EXPECT_FALSE(md()->status.phase.empty());
  EXPECT_EQ((*cluster_.get(res::modelDeployments(), kMd))["metadata"]["labels"]["tier"], "gold");
}

// Contract §8 and model_deployment_controller.h "Deleting": the role Deployments are deleted in
// the foreground; the deployment holds its Binding while they or their Pods remain; then it
// leaves the Binding's usedBy, and only after that its finalizer goes.
TEST_F(ModelDeploymentControllerTest, TeardownWaitsForThePodsThenReleasesTheBinding) {
  created();
  ASSERT_THAT(pass(), testing::IsOk());
  ASSERT_THAT(binding().status.used_by, ::testing::SizeIs(1));
  // A replica of the role, as the kubelet runs it.
  cluster_.create(res::pods(), Json::parse(R"({"metadata": {"namespace": "team-a",
      "name": "qwen-chat-server-0", "labels": {"app.kubernetes.io/name": "model-deployment",
      "app.kubernetes.io/instance": "qwen-chat"}}, "status": {"phase": "Running"}})"));
  cluster_.modify(res::modelDeployments(), kMd, [&](Json& object) {
    object["metadata"]["deletionTimestamp"] = kube::formatTime(clock_.wallNow());
  });

  // Pass 1: the role Deployment is deleted in the foreground; the Binding is held.
  cluster_.log().clear();
  auto first = pass();
  ASSERT_THAT(first, testing::IsOk());
  ASSERT_TRUE(first->requeue_after.has_value());
  EXPECT_EQ(*first->requeue_after, config_.deleting_poll);
  const auto writes = cluster_.log().writes();
  EXPECT_NE(std::find(writes.begin(), writes.end(), "DELETE deployments/team-a/qwen-chat-server"),
            writes.end());
  EXPECT_EQ(md()->status.phase, "Deleting");
  EXPECT_THAT(binding().status.used_by, ::testing::SizeIs(1));
  EXPECT_TRUE(api::hasFinalizer(md()->metadata, mdc::kFinalizer));

  // The Deployment is gone but its Pod still terminates: still held.
  cluster_.remove(res::deployments(), kRoleDeployment);
  cluster_.log().clear();
  ASSERT_THAT(pass(), testing::IsOk());
  EXPECT_THAT(cluster_.log().filtered([](const std::string& line) {
    return line.rfind("PATCH ", 0) == 0 || line.rfind("PUT kvcachepoolbindings", 0) == 0;
  }),
              IsEmpty());
  EXPECT_THAT(binding().status.used_by, ::testing::SizeIs(1));

  // The last Pod is gone: the Binding is let go, then the finalizer.
  cluster_.remove(res::pods(), "team-a/qwen-chat-server-0");
  cluster_.log().clear();
  ASSERT_THAT(pass(), testing::IsOk());
  const auto last = cluster_.log().writes();
  ASSERT_GE(last.size(), 2U);
  EXPECT_EQ(last[last.size() - 2], "PUT kvcachepoolbindings/team-a/team-a/status");
  EXPECT_EQ(last.back(), "PATCH modeldeployments/team-a/qwen-chat");
  EXPECT_THAT(binding().status.used_by, IsEmpty());
  EXPECT_FALSE(md().has_value()) << "deleted once its finalizer went";
}

// A deployment whose Binding does not exist: nothing to note; the status says so.
TEST_F(ModelDeploymentControllerTest, AMissingBindingIsReportedAndNothingIsNoted) {
  cluster_.remove(res::kvCachePoolBindings(), "team-a/team-a");
  created();
  cluster_.log().clear();
  ASSERT_THAT(pass(), testing::IsOk());
  EXPECT_THAT(cluster_.log().filtered([](const std::string& line) {
    return line.find("kvcachepoolbindings") != std::string::npos;
  }),
              IsEmpty());
  const auto d = md();
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->status.phase.empty());
}

// An object that does not decode is terminal: nothing is written; the backstop brings it back.
TEST_F(ModelDeploymentControllerTest, AnUndecodableDeploymentIsTerminalAndBackstopped) {
  Json broken = modelDeploymentObject();
  broken["spec"]["roles"] = "server";
  cluster_.create(res::modelDeployments(), broken);
  auto outcome = pass();
  EXPECT_THAT(outcome, StatusIs(StatusCode::InvalidArgument));
  EXPECT_THAT(cluster_.log().writes(), IsEmpty());

  runtime::ControllerOptions options;
  options.name = std::string(kModelDeploymentControllerName);
  runtime::Controller controller(std::move(options),
                                 std::make_shared<ModelDeploymentReconciler>(config_), clock_);
  controller.enqueue(runtime::Request{"team-a", "qwen-chat"});
  ASSERT_TRUE(controller.processNext());
  EXPECT_EQ(controller.queue().numRequeues(kMd), 0);
  EXPECT_EQ(controller.queue().delayedLen(), 1U);
  clock_.advance(std::chrono::minutes(5));
  ASSERT_TRUE(testing::eventually([&] { return controller.queue().len() == 1; }));
  controller.stop();
}

}  // namespace
}  // namespace kvc::controllers
