// The finalizer helper: guarded JSON patches and the apply/cleanup flow.
#include "kvc/runtime/finalizer.h"

#include <gtest/gtest.h>

#include "fake_apiserver.h"

namespace kvc::runtime {
namespace {

using testing::FakeApiServer;
using testing::FakeRequest;
using testing::ResponseWriter;

constexpr const char* kFinalizer = "kvcache.gpustack.ai/ledger";

Json binding(Json finalizers, bool deleting = false) {
  Json meta = {{"name", "b"}, {"namespace", "ns"}};
  if (!finalizers.is_null()) {
    meta["finalizers"] = std::move(finalizers);
  }
  if (deleting) {
    meta["deletionTimestamp"] = "2024-05-01T00:00:00Z";
  }
  return Json{{"metadata", std::move(meta)}};
}

TEST(FinalizerPatchTest, AddingToAnAbsentListTestsForNull) {
  EXPECT_EQ(addFinalizerPatch(binding(Json()), kFinalizer), Json::parse(R"([
      {"op":"test","path":"/metadata/finalizers","value":null},
      {"op":"add","path":"/metadata/finalizers","value":["kvcache.gpustack.ai/ledger"]}])"));
}

TEST(FinalizerPatchTest, AddingToAnExistingListTestsItsContent) {
  EXPECT_EQ(addFinalizerPatch(binding(Json::array({"other"})), kFinalizer), Json::parse(R"([
      {"op":"test","path":"/metadata/finalizers","value":["other"]},
      {"op":"add","path":"/metadata/finalizers/-","value":"kvcache.gpustack.ai/ledger"}])"));
}

TEST(FinalizerPatchTest, RemovingKeepsOtherFinalizersAndTestsFirst) {
  EXPECT_EQ(removeFinalizerPatch(binding(Json::array({"a", kFinalizer, "b"})), kFinalizer),
            Json::parse(R"([
      {"op":"test","path":"/metadata/finalizers","value":["a","kvcache.gpustack.ai/ledger","b"]},
      {"op":"replace","path":"/metadata/finalizers","value":["a","b"]}])"));
  EXPECT_TRUE(removeFinalizerPatch(binding(Json::array({"a"})), kFinalizer).empty());
}

class FinalizerFlowTest : public ::testing::Test {
protected:
  FinalizerFlowTest() {
    server_.setHandler([this](const FakeRequest& r, ResponseWriter& out) {
      if (answer_422_) {
        out.respond(422, testing::statusBody(422, "Invalid", "the test operation failed"));
        return;
      }
      static_cast<void>(r);
      out.respond(200, binding(Json()).dump());
    });
    api_ = std::make_unique<kube::Api>(*kube::Client::create(server_.config()),
                                       kube::resources::kvCachePoolBindings(), "ns");
  }
  Result<Action> run(const Json& object) {
    return reconcileWithFinalizer(
        *api_, object, kFinalizer,
        [this](const Json&) -> Result<Action> {
          ++applied_;
          return Action::requeueAfter(std::chrono::seconds(30));
        },
        [this](const Json&) -> Result<Action> {
          ++cleaned_;
          return cleanup_result_;
        });
  }

  FakeApiServer server_;
  std::unique_ptr<kube::Api> api_;
  bool answer_422_ = false;
  int applied_ = 0;
  int cleaned_ = 0;
  Result<Action> cleanup_result_ = Action::done();
};

TEST_F(FinalizerFlowTest, ALiveObjectWithoutTheFinalizerGetsItFirst) {
  auto r = run(binding(Json()));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->requeue_after.has_value());  // the patch's watch event brings it back
  EXPECT_EQ(applied_, 0);
  const auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_EQ(requests[0].method, "PATCH");
  EXPECT_EQ(requests[0].headers.at("content-type"), "application/json-patch+json");
}

TEST_F(FinalizerFlowTest, ALiveObjectWithTheFinalizerIsApplied) {
  auto r = run(binding(Json::array({kFinalizer})));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(applied_, 1);
  EXPECT_EQ(r->requeue_after, std::chrono::seconds(30));
  EXPECT_EQ(server_.requestCount(), 0U);
}

TEST_F(FinalizerFlowTest, ADeletedObjectIsCleanedUpThenReleased) {
  auto r = run(binding(Json::array({kFinalizer}), /*deleting=*/true));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(cleaned_, 1);
  ASSERT_EQ(server_.requestCount(), 1U);
  EXPECT_EQ(Json::parse(server_.requests()[0].body)[1]["op"], "replace");
}

TEST_F(FinalizerFlowTest, UnfinishedOrFailedCleanupKeepsTheFinalizer) {
  cleanup_result_ = Action::requeueAfter(std::chrono::seconds(5));
  auto waiting = run(binding(Json::array({kFinalizer}), true));
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ(waiting->requeue_after, std::chrono::seconds(5));
  cleanup_result_ = unavailable("store unreachable");
  EXPECT_EQ(run(binding(Json::array({kFinalizer}), true)).status().code(), StatusCode::Unavailable);
  EXPECT_EQ(server_.requestCount(), 0U);
}

TEST_F(FinalizerFlowTest, ADeletedObjectWithoutOurFinalizerIsLeftAlone) {
  auto r = run(binding(Json::array({"someone-else"}), true));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(cleaned_, 0);
  EXPECT_EQ(server_.requestCount(), 0U);
}

TEST_F(FinalizerFlowTest, AFailedTestMeansAConcurrentChangeAndRetries) {
  answer_422_ = true;
  auto r = run(binding(Json()));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::Aborted);
}

}  // namespace
}  // namespace kvc::runtime
