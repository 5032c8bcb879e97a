// The validating webhooks on any AdmissionReview body: the Pod freeze and the admissions of
// KVCachePool, KVCachePoolBinding, KVCacheBackend and ModelDeployment. The first byte picks the
// handler (as the path picks the route; a review of one kind sent to another's route included),
// the rest is the body: decoded as the server decodes it, judged by the real handler, encoded.
//
// Every answer carries the request's uid, a refusal carries a code the API server knows and a
// message, and the encoded review reads back as a v1 AdmissionReview saying the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "kvc/api/indexes.h"
#include "kvc/api/kvcache.h"
#include "kvc/kube/client.h"
#include "kvc/kube/object.h"
#include "kvc/runtime/store.h"
#include "kvc/webhook/admission.h"
#include "kvc/webhook/backend_handlers.h"
#include "kvc/webhook/model_deployment_handlers.h"
#include "kvc/webhook/pod_handlers.h"
#include "kvc/webhook/quota_handlers.h"

namespace {

using kvc::Json;
using kvc::webhook::AdmissionRequest;
using kvc::webhook::AdmissionResponse;

// The API server, as far as a cache miss reaches it: every read is NotFound (a live "does not
// exist", which the rules judge). Nothing leaves the process.
class NotFoundTransport : public kvc::kube::Transport {
public:
  kvc::kube::ApiResult<kvc::kube::HttpResponse> send(const kvc::kube::HttpRequest&,
                                                     std::stop_token) override {
    return kvc::kube::HttpResponse{
        404, R"({"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404})",
        "application/json"};
  }
  kvc::kube::ApiResult<kvc::kube::HttpResponse> stream(const kvc::kube::HttpRequest& request,
                                                       const std::function<bool(std::string_view)>&,
                                                       std::stop_token stop) override {
    return send(request, std::move(stop));
  }
};

Json parse(std::string_view text) { return Json::parse(text); }

const Json kBackend = parse(R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "KVCacheBackend",
  "metadata": {"name": "mooncake-dram"}, "spec": {"connection": {"managed": {"leader": {},
  "members": [{"medium": "DRAM", "capacityPerMember": "8Gi"}]}}}})");
const Json kPool = parse(R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "KVCachePool",
  "metadata": {"name": "shared-dram"}, "spec": {"backends": ["mooncake-dram"],
  "quota": {"total": "16Gi"}}, "status": {"clientEndpoint": "mooncake-dram:50051"}})");
const Json kBinding = parse(R"({"apiVersion": "worker.gpustack.ai/v1",
  "kind": "KVCachePoolBinding", "metadata": {"name": "team-a", "namespace": "team-a"},
  "spec": {"poolRef": {"name": "shared-dram"}, "quota": {"ceiling": "8Gi"},
  "domain": {"blockSize": 64, "dtype": "bfloat16"}}})");

void put(kvc::runtime::Store& store, const Json& object) {
  store.upsert(kvc::kube::object::key(object), object, kvc::runtime::packObject(object));
}

struct Handlers {
  kvc::runtime::Store pools;
  kvc::runtime::Store backends;
  kvc::runtime::Store bindings;
  std::unique_ptr<kvc::webhook::QuotaAdmission> quota;
  std::unique_ptr<kvc::webhook::BackendValidation> backend;
  std::unique_ptr<kvc::webhook::ModelDeploymentValidation> deployments;

  Handlers() {
    pools.addIndex(kvc::api::kPoolsByBackend,
                   [](const Json& p) { return kvc::api::poolBackends(p); });
    bindings.addIndex(kvc::api::kBindingsByPool,
                      [](const Json& b) { return kvc::api::bindingPool(b); });
    put(pools, kPool);
    put(backends, kBackend);
    put(bindings, kBinding);
    kvc::kube::Config config;
    config.server = "https://127.0.0.1:1";
    auto client = kvc::kube::Client::create(config, std::make_shared<NotFoundTransport>());
    quota = std::make_unique<kvc::webhook::QuotaAdmission>(
        client, kvc::webhook::QuotaCaches{&pools, &backends, &bindings}, nullptr);
    backend = std::make_unique<kvc::webhook::BackendValidation>(nullptr);
    auto cluster = std::make_shared<kvc::policy::ClusterSnapshot>();
    cluster->add(*kvc::api::backendFromJson(kBackend));
    cluster->add(*kvc::api::poolFromJson(kPool));
    cluster->add(*kvc::api::bindingFromJson(kBinding));
    deployments = std::make_unique<kvc::webhook::ModelDeploymentValidation>(cluster, nullptr);
  }

  AdmissionResponse judge(std::uint8_t selector, const AdmissionRequest& request) const {
    switch (selector) {
      case 'F':
        return kvc::webhook::validatePod(request);
      case 'P':
        return quota->admitPool(request);
      case 'B':
        return quota->admitBinding(request);
      case 'K':
        return backend->admitBackend(request);
      case 'M':
        return deployments->admitModelDeployment(request);
      default:
        return judge("FPBKM"[selector % 5], request);
    }
  }
};

void check(bool condition) {
  if (!condition) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Handlers handlers;
  if (size == 0) {
    return 0;
  }
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto request = kvc::webhook::decodeAdmissionReview(body);
  if (!request.ok()) {
    check(!request.status().message().empty());
    return 0;
  }
  const AdmissionResponse response = handlers.judge(data[0], *request);
  check(response.uid == request->uid);
  if (!response.allowed) {
    check(response.code == 400 || response.code == 403 || response.code == 422 ||
          response.code == 500);
    check(!response.message.empty() && !response.reason.empty());
  }
  const Json review = Json::parse(kvc::webhook::encodeAdmissionReview(response));
  check(review.at("apiVersion") == "admission.k8s.io/v1" && review.at("kind") == "AdmissionReview");
  check(review.at("response").at("uid") == response.uid);
  check(review.at("response").at("allowed") == response.allowed);
  return 0;
}
