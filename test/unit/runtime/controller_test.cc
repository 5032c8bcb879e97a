// The reconcile loop: results and error codes map onto the queue as controller-runtime's
// reconcileHandler does; time is a fake clock.
#include "kvc/runtime/controller.h"
#include "kvc/runtime/trigger.h"

#include <gtest/gtest.h>

#include "eventually.h"

#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace kvc::runtime {
namespace {

using kvc::testing::eventually;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

// Reconciler
class ScriptedReconciler final : public Reconciler {
public:
  void push(Result<Action> r) {
    std::lock_guard<std::mutex> guard(mutex_);
    script_.push_back(std::move(r));
  }
  void throwNext() {
    std::lock_guard<std::mutex> guard(mutex_);
    throw_next_ = true;
  }
  Result<Action> reconcile(const Request& request, std::stop_token) override {
    std::lock_guard<std::mutex> guard(mutex_);
    seen_.push_back(request.key());
    if (throw_next_) {
      throw_next_ = false;
      // What a decoder mistake looks like: value() of a number as a string throws type_error.
      const std::string wrong = Json::parse(R"({"a":1})").value("a", std::string());
      return invalidArgument("not reached: " + wrong);
    }
    if (script_.empty()) {
      return Action::done();
    }
    Result<Action> r = std::move(script_.front());
    script_.pop_front();
    return r;
  }
  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> guard(mutex_);
    return seen_;
  }

private:
  std::mutex mutex_;
  std::deque<Result<Action>> script_;
  std::vector<std::string> seen_;
  bool throw_next_ = false;
};

class ControllerTest : public ::testing::Test {
protected:
  ControllerTest() : reconciler_(std::make_shared<ScriptedReconciler>()) {
    ControllerOptions o;
    o.name = "test";
    o.metrics = &registry_;
    controller_ = std::make_unique<Controller>(std::move(o), reconciler_, clock_);
  }
  // Processes one ready item; false when none is ready now.
  bool step() {
    if (controller_->queue().len() == 0) {
      return false;
    }
    return controller_->processNext();
  }

  FakeClock clock_;
  Registry registry_;
  std::shared_ptr<ScriptedReconciler> reconciler_;
  std::unique_ptr<Controller> controller_;
};

TEST_F(ControllerTest, SuccessForgetsTheKey) {
  controller_->enqueue(Request{"ns", "b"});
  ASSERT_TRUE(step());
  EXPECT_EQ(reconciler_->seen(), std::vector<std::string>{"ns/b"});
  EXPECT_EQ(controller_->queue().numRequeues("ns/b"), 0);
  EXPECT_FALSE(step());
  EXPECT_NE(registry_.render().find(
                R"(controller_runtime_reconcile_total{controller="test",result="success"} 1)"),
            std::string::npos);
}

TEST_F(ControllerTest, RequeueAfterWaitsExactlyThatLong) {
  reconciler_->push(Action::requeueAfter(seconds(30)));
  controller_->enqueue(Request{"", "pool"});
  ASSERT_TRUE(step());
  clock_.advance(seconds(29));
  EXPECT_FALSE(step());
  clock_.advance(seconds(1));
  ASSERT_TRUE(step());
  EXPECT_EQ(reconciler_->seen(), (std::vector<std::string>{"pool", "pool"}));
}

TEST_F(ControllerTest, TransientErrorsBackOffExponentiallyPerKey) {
  for (int i = 0; i < 3; ++i) {
    reconciler_->push(unavailable("apiserver down"));
  }
  controller_->enqueue(Request{"ns", "b"});
  ASSERT_TRUE(step());  // fails: retry in 5 ms
  clock_.advance(milliseconds(4));
  EXPECT_FALSE(step());
  clock_.advance(milliseconds(1));
  ASSERT_TRUE(step());  // fails: retry in 10 ms
  clock_.advance(milliseconds(9));
  EXPECT_FALSE(step());
  clock_.advance(milliseconds(1));
  ASSERT_TRUE(step());  // fails: retry in 20 ms
  clock_.advance(milliseconds(20));
  ASSERT_TRUE(step());  // succeeds: forgotten
  EXPECT_EQ(controller_->queue().numRequeues("ns/b"), 0);
  EXPECT_EQ(reconciler_->seen().size(), 4U);
}

TEST_F(ControllerTest, ConflictsRetryAlmostAtOnce) {
  reconciler_->push(aborted("the object has been modified"));
  controller_->enqueue(Request{"ns", "b"});
  ASSERT_TRUE(step());
  clock_.advance(milliseconds(5));
  ASSERT_TRUE(step());
  EXPECT_EQ(reconciler_->seen().size(), 2U);
}

TEST_F(ControllerTest, TerminalErrorsWaitForAChangeBehindABackstop) {
  reconciler_->push(invalidArgument("spec.poolRef names no pool"));
  reconciler_->push(failedPrecondition("pool not ready"));
  controller_->enqueue(Request{"ns", "b"});
  ASSERT_TRUE(step());
  EXPECT_EQ(controller_->queue().numRequeues("ns/b"), 0);  // not rate-limited
  clock_.advance(minutes(5) - milliseconds(1));
  EXPECT_FALSE(step());                      // not retried before the backstop
  controller_->enqueue(Request{"ns", "b"});  // a watch event: the input changed
  ASSERT_TRUE(step());
  clock_.advance(minutes(5));
  // The backstop brings the key back even if nothing watched changes (a store that healed).
  ASSERT_TRUE(eventually([&] { return controller_->queue().len() > 0; }));
  ASSERT_TRUE(step());
  EXPECT_EQ(reconciler_->seen().size(), 3U);
  EXPECT_NE(registry_.render().find(R"(result="terminal"} 2)"), std::string::npos);
}

TEST_F(ControllerTest, AThrowingReconcilerDoesNotKillTheWorker) {
  // nlohmann's value() throws type_error on a wrong type: that must be one failed pass.
  reconciler_->throwNext();
  controller_->start();
  controller_->enqueue(Request{"ns", "b"});
  ASSERT_TRUE(eventually(
      [&] { return registry_.render().find(R"(result="panic"} 1)") != std::string::npos; }));
  // Retried with backoff on the same worker, which lives on.
  clock_.advance(milliseconds(5));
  ASSERT_TRUE(eventually([&] { return reconciler_->seen().size() == 2U; }));
  controller_->enqueue(Request{"ns", "c"});
  ASSERT_TRUE(eventually([&] { return reconciler_->seen().size() == 3U; }));
  controller_->stop();
}

TEST_F(ControllerTest, RequeueNowIsRateLimited) {
  reconciler_->push(Action::requeueNow());
  controller_->enqueue(Request{"ns", "b"});
  ASSERT_TRUE(step());
  EXPECT_FALSE(step());
  clock_.advance(milliseconds(5));
  ASSERT_TRUE(step());
}

TEST_F(ControllerTest, WorkersDrainOnStop) {
  controller_->start();
  for (int i = 0; i < 50; ++i) {
    controller_->enqueue(Request{"ns", "k" + std::to_string(i % 10)});
  }
  controller_->stop();
  EXPECT_EQ(controller_->queue().processingLen(), 0U);
  EXPECT_EQ(controller_->queue().len(), 0U);
  // Every queued key was reconciled before the workers left (client-go's drain), none lost.
  const std::vector<std::string> seen = reconciler_->seen();
  const std::set<std::string> keys(seen.begin(), seen.end());
  std::set<std::string> expected;
  for (int i = 0; i < 10; ++i) {
    expected.insert("ns/k" + std::to_string(i));
  }
  EXPECT_EQ(keys, expected);
  EXPECT_FALSE(controller_->processNext());  // shut down
}

TEST(RequestTest, KeysRoundTrip) {
  EXPECT_EQ(Request::fromKey("ns/name"), (Request{"ns", "name"}));
  EXPECT_EQ(Request::fromKey("cluster-scoped"), (Request{"", "cluster-scoped"}));
  EXPECT_EQ((Request{"a", "b"}).key(), "a/b");
}

TEST(MapFuncTest, OwnerReferencesMapToTheControllingOwner) {
  const Json pod = Json::parse(R"({"metadata":{"name":"p","namespace":"n","ownerReferences":[
      {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","controller":true},
      {"apiVersion":"worker.gpustack.ai/v1","kind":"KVCacheBackend","name":"not-controller"}]}})");
  kube::ResourceType replica_sets{"apps", "v1", "ReplicaSet", "replicasets", true};
  EXPECT_EQ(requestForOwner(replica_sets)(pod), (std::vector<Request>{{"n", "rs"}}));
  EXPECT_TRUE(requestForOwner(kube::resources::kvCacheBackends())(pod).empty());
  EXPECT_EQ(requestForObject(pod), (std::vector<Request>{{"n", "p"}}));
}

TEST(MapFuncTest, AClusterScopedOwnerIsKeyedByItsNameAlone) {
  // A Deployment in gpustack-system owned by a cluster-scoped KVCacheBackend: the request must be
  // "mooncake-dram", not "gpustack-system/mooncake-dram" (which misses the cache, so the owner
  // would look deleted).
  const Json deployment = Json::parse(R"({"metadata":{"name":"mooncake-dram-leader",
      "namespace":"gpustack-system","ownerReferences":[{"apiVersion":"worker.gpustack.ai/v1",
      "kind":"KVCacheBackend","name":"mooncake-dram","uid":"u1","controller":true}]}})");
  const std::vector<Request> requests =
      requestForOwner(kube::resources::kvCacheBackends())(deployment);
  ASSERT_EQ(requests, (std::vector<Request>{{"", "mooncake-dram"}}));
  EXPECT_EQ(requests.front().key(), "mooncake-dram");
}

TEST(MapFuncTest, AnOwnerOfTheSameKindInAnotherGroupIsNotOurs) {
  const Json child = Json::parse(R"({"metadata":{"name":"c","namespace":"n","ownerReferences":[
      {"apiVersion":"example.com/v1","kind":"KVCacheBackend","name":"theirs","controller":true}]}})");
  EXPECT_TRUE(requestForOwner(kube::resources::kvCacheBackends())(child).empty());
  // Another version of our group is ours.
  const Json other_version = Json::parse(R"({"metadata":{"name":"c","namespace":"n",
      "ownerReferences":[{"apiVersion":"worker.gpustack.ai/v1alpha1","kind":"KVCacheBackend",
      "name":"ours","controller":true}]}})");
  EXPECT_EQ(requestForOwner(kube::resources::kvCacheBackends())(other_version),
            (std::vector<Request>{{"", "ours"}}));
}

TEST(UpdateFilterTest, StatusOnlyUpdatesAreNotSpecChanges) {
  const Json old_object = Json::parse(R"({"metadata":{"name":"p","generation":2,
      "resourceVersion":"5"},"status":{"phase":"Provisioning"}})");
  Json status_write = old_object;
  status_write["metadata"]["resourceVersion"] = "6";
  status_write["status"]["phase"] = "Ready";
  EXPECT_FALSE(specOrLifecycleChanged(old_object, status_write));
  Json spec_edit = old_object;
  spec_edit["metadata"]["generation"] = 3;
  EXPECT_TRUE(specOrLifecycleChanged(old_object, spec_edit));
  Json deleting = old_object;
  deleting["metadata"]["deletionTimestamp"] = "2026-12-01T00:00:00Z";
  EXPECT_TRUE(specOrLifecycleChanged(old_object, deleting));
  Json finalized = old_object;
  finalized["metadata"]["finalizers"] = Json::array({"x"});
  EXPECT_TRUE(specOrLifecycleChanged(old_object, finalized));
}

// A Trigger is a source of requests (controller-runtime's source.Channel): what it fires lands on
// the watching controller's queue, with the queue's contract.
TEST_F(ControllerTest, ATriggerFeedsTheControllerThatWatchesIt) {
  auto trigger = std::make_shared<Trigger>();
  trigger->fire(Request{"", "early"});  // nobody watches yet: dropped
  controller_->watch(trigger);
  trigger->fire(Request{"", "p"});
  trigger->fire(Request{"", "p"});  // already waiting: not added twice
  trigger->fire(Request{"", ""});   // no name: nothing to pass
  ASSERT_TRUE(step());
  EXPECT_FALSE(step());
  EXPECT_EQ(reconciler_->seen(), std::vector<std::string>{"p"});
}

TEST_F(ControllerTest, ATriggerOutlivesItsControllerAndFeedsOnlyTheLastWatcher) {
  auto trigger = std::make_shared<Trigger>();
  controller_->watch(trigger);
  ControllerOptions o;
  o.name = "other";
  auto other_reconciler = std::make_shared<ScriptedReconciler>();
  auto other = std::make_unique<Controller>(std::move(o), other_reconciler, clock_);
  other->watch(trigger);  // moved to the other controller
  controller_.reset();    // the first one going does not cut the other off
  trigger->fire(Request{"", "q"});
  EXPECT_EQ(other->queue().len(), 1);
  other.reset();
  trigger->fire(Request{"", "r"});  // nobody watches any more: dropped, nothing dangles
}

TEST(UpdateFilterTest, AStatusFieldFilterSeesThatFieldAndTheSpec) {
  const auto filter = specLifecycleOrStatusChanged("usedBy");
  const Json old_object = Json::parse(R"({"metadata":{"name":"b","generation":1,
      "resourceVersion":"5"},"status":{"phase":"Ready","usedBy":[]}})");
  Json phase = old_object;
  phase["status"]["phase"] = "Degraded";
  EXPECT_FALSE(filter(old_object, phase));
  Json claimed = old_object;
  claimed["status"]["usedBy"] = Json::array({Json{{"kind", "KVCachePool"}, {"name", "p"}}});
  EXPECT_TRUE(filter(old_object, claimed));
  Json spec_edit = old_object;
  spec_edit["metadata"]["generation"] = 2;
  EXPECT_TRUE(filter(old_object, spec_edit));
  EXPECT_FALSE(filter(Json::parse(R"({"status":"odd"})"), Json::parse(R"({"status":"odd"})")));
}

}  // namespace
}  // namespace kvc::runtime
