// The KVCachePool / KVCachePoolBinding validation adapter against the in-process fake API server:
// what it reads (the cache first, live on a miss, within its own timeout), and how a read becomes
// an answer — a live NotFound is the rule's "does not exist", any other failure (and an object
// that does not decode) an InternalError that is no verdict on the object. The rules themselves
// are golden-tested (test/golden/quota/admission-pool, admission-binding).
#include "kvc/webhook/quota_handlers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>

#include "fake_apiserver.h"
#include "gate.h"
#include "kvc/api/indexes.h"
#include "kvc/kube/object.h"
#include "kvc/runtime/store.h"

namespace kvc::webhook {
namespace {

using kvc::testing::FakeApiServer;
using kvc::testing::FakeRequest;
using kvc::testing::ResponseWriter;
using ::testing::HasSubstr;

constexpr std::string_view kBackendPath =
    "/apis/worker.gpustack.ai/v1/kvcachebackends/mooncake-dram";
constexpr std::string_view kPoolPath = "/apis/worker.gpustack.ai/v1/kvcachepools/shared-dram";

Json backend() {
  return Json::parse(R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "KVCacheBackend",
    "metadata": {"name": "mooncake-dram"},
    "spec": {"connection": {"managed": {"leader": {},
      "members": [{"nodeSelector": {"kubernetes.io/os": "linux"}, "medium": "DRAM",
                   "capacityPerMember": "8Gi"}]}}}})");
}

Json pool() {
  return Json::parse(R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "KVCachePool",
    "metadata": {"name": "shared-dram"},
    "spec": {"backends": ["mooncake-dram"], "quota": {"total": "16Gi"}}})");
}

Json binding(const std::string& ceiling) {
  Json object = Json::parse(R"({"apiVersion": "worker.gpustack.ai/v1",
    "kind": "KVCachePoolBinding", "metadata": {"name": "team-a", "namespace": "team-a"},
    "spec": {"poolRef": {"name": "shared-dram"}, "quota": {"ceiling": "8Gi"},
             "domain": {"blockSize": 64, "dtype": "bfloat16"}}})");
  object["spec"]["quota"]["ceiling"] = ceiling;
  return object;
}

AdmissionRequest review(std::string kind, std::string operation, Json object, Json old = Json()) {
  AdmissionRequest request;
  request.uid = "uid-7";
  request.kind = std::move(kind);
  request.operation = std::move(operation);
  request.name = kube::object::name(object);
  request.namespace_name = kube::object::namespaceName(object);
  request.object = std::move(object);
  request.old_object = std::move(old);
  return request;
}

void put(runtime::Store& store, const Json& object) {
  store.upsert(kube::object::key(object), object, runtime::packObject(object));
}

using kvc::testing::Gate;

const std::string kRetry = "; it is not a verdict on the object. Retry once the API server answers";

class QuotaAdmissionTest : public ::testing::Test {
protected:
  QuotaAdmissionTest() {
    kube::Config config = server_.config();
    config.timeout = std::chrono::seconds(60);  // only the webhook's own timeout ends a read soon
    client_ = *kube::Client::create(config);
    pools_.addIndex(api::kPoolsByBackend, [](const Json& p) { return api::poolBackends(p); });
    bindings_.addIndex(api::kBindingsByPool, [](const Json& b) { return api::bindingPool(b); });
  }
  ~QuotaAdmissionTest() override { gate_.open(); }

  // The server answers GETs of a path it holds with its object, everything else 404.
  void serve(std::map<std::string, Json> objects) {
    server_.setHandler(kvc::testing::serveObjects(std::move(objects)));
  }
  void answerStatus(int code, std::string_view reason, std::string_view message) {
    server_.setHandler(kvc::testing::answerStatus(code, reason, message));
  }
  void holdAnswers() {
    server_.setHandler([this](const FakeRequest&, ResponseWriter& out) {
      gate_.wait();
      out.respond(200, backend().dump());
    });
  }

  QuotaAdmission cached() const {
    return QuotaAdmission(client_, QuotaCaches{&pools_, &backends_, &bindings_}, {},
                          std::chrono::milliseconds(200));
  }
  QuotaAdmission uncached() const {
    return QuotaAdmission(client_, QuotaCaches{}, {}, std::chrono::milliseconds(200));
  }

  Gate gate_;  // outlives the server's connection threads
  FakeApiServer server_;
  kube::ClientPtr client_;
  runtime::Store pools_;
  runtime::Store backends_;
  runtime::Store bindings_;
};

TEST_F(QuotaAdmissionTest, APoolsCachedBackendIsReadWithoutARequest) {
  answerStatus(500, "InternalError", "must not be asked");
  put(backends_, backend());
  const AdmissionResponse response = cached().admitPool(review("KVCachePool", "CREATE", pool()));
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_EQ(response.uid, "uid-7");
  EXPECT_EQ(server_.requestCount(), 0U);
}

TEST_F(QuotaAdmissionTest, APoolsBackendMissingFromTheCacheIsReadLive) {
  serve({{std::string(kBackendPath), backend()}});
  const AdmissionResponse response = cached().admitPool(review("KVCachePool", "CREATE", pool()));
  EXPECT_TRUE(response.allowed) << response.message;
  const auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].path, kBackendPath);
}

TEST_F(QuotaAdmissionTest, APoolsBackendIsReadLiveWithoutCaches) {
  serve({{std::string(kBackendPath), backend()}});
  const AdmissionResponse response = uncached().admitPool(review("KVCachePool", "CREATE", pool()));
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_EQ(server_.requestCount(), 1U);
}

TEST_F(QuotaAdmissionTest, ABackendTheServerDoesNotHaveIsTheRulesNotFound) {
  serve({});
  const AdmissionResponse response = cached().admitPool(review("KVCachePool", "CREATE", pool()));
  ASSERT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 422);
  EXPECT_EQ(response.reason, "Invalid");
  ASSERT_EQ(response.causes.size(), 1U);
  EXPECT_EQ(response.causes[0].reason, "FieldValueNotFound");
  EXPECT_EQ(response.causes[0].field, "spec.backends[0]");
}

TEST_F(QuotaAdmissionTest, AFailedBackendReadIsAnInternalErrorNotAVerdict) {
  answerStatus(500, "InternalError", "etcd is down");
  const AdmissionResponse response = cached().admitPool(review("KVCachePool", "CREATE", pool()));
  ASSERT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 500);
  EXPECT_EQ(response.reason, "InternalError");
  EXPECT_EQ(response.message,
            "reading KVCacheBackend \"mooncake-dram\" failed, so the request can be judged "
            "neither way (InternalError (HTTP 500): etcd is down)" +
                kRetry);
  EXPECT_TRUE(response.causes.empty());
}

TEST_F(QuotaAdmissionTest, AForbiddenBackendReadIsAnInternalErrorNotAVerdict) {
  answerStatus(403, "Forbidden", "cannot get kvcachebackends");
  const AdmissionResponse response = uncached().admitPool(review("KVCachePool", "CREATE", pool()));
  ASSERT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 500);
  EXPECT_EQ(response.message,
            "reading KVCacheBackend \"mooncake-dram\" failed, so the request can be judged "
            "neither way (Forbidden (HTTP 403): cannot get kvcachebackends)" +
                kRetry);
}

TEST_F(QuotaAdmissionTest, ABackendThatDoesNotDecodeIsAnInternalErrorNotAVerdict) {
  Json broken = backend();
  broken["spec"] = "not an object";
  // Cached: no request.
  put(backends_, broken);
  const AdmissionResponse from_cache = cached().admitPool(review("KVCachePool", "CREATE", pool()));
  ASSERT_FALSE(from_cache.allowed);
  EXPECT_EQ(from_cache.code, 500);
  EXPECT_EQ(from_cache.message,
            "reading KVCacheBackend \"mooncake-dram\" failed, so the request can be judged "
            "neither way (spec must be an object, not string)" +
                kRetry);
  EXPECT_EQ(server_.requestCount(), 0U);
  // Live: the same answer.
  serve({{std::string(kBackendPath), broken}});
  const AdmissionResponse live = uncached().admitPool(review("KVCachePool", "CREATE", pool()));
  ASSERT_FALSE(live.allowed);
  EXPECT_EQ(live.code, 500);
  EXPECT_EQ(live.message, from_cache.message);
  EXPECT_EQ(server_.requestCount(), 1U);
}

TEST_F(QuotaAdmissionTest, ALiveReadEndsAtTheWebhooksTimeout) {
  holdAnswers();
  const auto start = std::chrono::steady_clock::now();
  const AdmissionResponse response = cached().admitPool(review("KVCachePool", "CREATE", pool()));
  const auto took = std::chrono::steady_clock::now() - start;
  gate_.open();
  ASSERT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 500);
  // The rest of the parenthesis is libcurl's wording.
  EXPECT_THAT(response.message,
              HasSubstr("reading KVCacheBackend \"mooncake-dram\" failed, so the request can be "
                        "judged neither way (Deadline: GET " +
                        std::string(kBackendPath) + ": "));
  EXPECT_THAT(response.message, ::testing::EndsWith(kRetry));
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST_F(QuotaAdmissionTest, ABindingsCachedPoolAndBackendAreReadWithoutARequest) {
  answerStatus(500, "InternalError", "must not be asked");
  put(pools_, pool());
  put(backends_, backend());
  const AdmissionResponse response =
      cached().admitBinding(review("KVCachePoolBinding", "CREATE", binding("8Gi")));
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_EQ(server_.requestCount(), 0U);
}

TEST_F(QuotaAdmissionTest, ABindingsPoolAndBackendMissingFromTheCacheAreReadLive) {
  serve({{std::string(kPoolPath), pool()}, {std::string(kBackendPath), backend()}});
  const AdmissionResponse response =
      cached().admitBinding(review("KVCachePoolBinding", "CREATE", binding("8Gi")));
  EXPECT_TRUE(response.allowed) << response.message;
  const auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 2U);
  EXPECT_EQ(requests[0].path, kPoolPath);
  EXPECT_EQ(requests[1].path, kBackendPath);
}

TEST_F(QuotaAdmissionTest, ABindingsPoolTheServerDoesNotHaveIsTheRulesNotFound) {
  serve({});
  const AdmissionResponse response =
      cached().admitBinding(review("KVCachePoolBinding", "CREATE", binding("8Gi")));
  ASSERT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 422);
  ASSERT_EQ(response.causes.size(), 1U);
  EXPECT_EQ(response.causes[0].reason, "FieldValueNotFound");
  EXPECT_EQ(server_.requestCount(), 1U);  // no backend to read
}

TEST_F(QuotaAdmissionTest, AFailedPoolReadOnACeilingUpdateIsAnInternalErrorNotAVerdict) {
  answerStatus(503, "ServiceUnavailable", "try later");
  const AdmissionResponse response = cached().admitBinding(
      review("KVCachePoolBinding", "UPDATE", binding("12Gi"), binding("8Gi")));
  ASSERT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 500);
  EXPECT_EQ(response.reason, "InternalError");
  EXPECT_EQ(response.message,
            "reading KVCachePool \"shared-dram\" failed, so the request can be judged neither "
            "way (ServiceUnavailable (HTTP 503): try later)" +
                kRetry);
}

TEST_F(QuotaAdmissionTest, AFailedBackendReadOfABindingIsAnInternalErrorNotAVerdict) {
  put(pools_, pool());
  answerStatus(500, "InternalError", "etcd is down");
  const AdmissionResponse response =
      cached().admitBinding(review("KVCachePoolBinding", "CREATE", binding("8Gi")));
  ASSERT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 500);
  EXPECT_EQ(response.message,
            "reading KVCacheBackend \"mooncake-dram\" failed, so the request can be judged "
            "neither way (InternalError (HTTP 500): etcd is down)" +
                kRetry);
}

}  // namespace
}  // namespace kvc::webhook
