// The reconcile loop: results and error codes map onto the queue as controller-runtime's
// reconcileHandler does; time is a fake clock.
#include "kvc/runtime/controller.h"

#include <gtest/gtest.h>

#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace kvc::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Reconciler
class ScriptedReconciler final : public Reconciler {
public:
  void push(Result<Action> r) {
    std::lock_guard<std::mutex> guard(mutex_);
    script_.push_back(std::move(r));
  }
  Result<Action> reconcile(const Request& request, std::stop_token) override {
    std::lock_guard<std::mutex> guard(mutex_);
    seen_.push_back(request.key());
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

TEST_F(ControllerTest, TerminalErrorsWaitForAChange) {
  reconciler_->push(invalidArgument("spec.poolRef names no pool"));
  reconciler_->push(failedPrecondition("pool not ready"));
  controller_->enqueue(Request{"ns", "b"});
  ASSERT_TRUE(step());
  clock_.advance(seconds(3600));
  EXPECT_FALSE(step());  // not requeued
  controller_->enqueue(Request{"ns", "b"});  // a watch event: the input changed
  ASSERT_TRUE(step());
  clock_.advance(seconds(3600));
  EXPECT_FALSE(step());
  EXPECT_NE(registry_.render().find(R"(result="terminal"} 2)"), std::string::npos);
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
      {"kind":"ReplicaSet","name":"rs","controller":true},
      {"kind":"KVCacheBackend","name":"not-controller"}]}})");
  EXPECT_EQ(requestForOwner("ReplicaSet")(pod), (std::vector<Request>{{"n", "rs"}}));
  EXPECT_TRUE(requestForOwner("KVCacheBackend")(pod).empty());
  EXPECT_EQ(requestForObject(pod), (std::vector<Request>{{"n", "p"}}));
}

}  // namespace
}  // namespace kvc::runtime
