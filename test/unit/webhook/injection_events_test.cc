// The injection Events' worker on Pods whose owner references are not what the API server would
// have sent: the webhook's port takes any POST, and a throw in the worker ended the process.
#include "kvc/webhook/injection_events.h"

#include <gtest/gtest.h>

#include "fake_apiserver.h"

namespace kvc::webhook {
namespace {

TEST(InjectionEvents, OwnerReferencesOfTheWrongTypesAreNoOwner) {
  kvc::testing::FakeApiServer server;
  server.setHandler(kvc::testing::answerStatus(404, "NotFound", "none"));
  auto client = kube::Client::create(server.config());
  ASSERT_TRUE(client.ok());
  runtime::EventRecorderOptions options;
  options.reporting_instance = "test";
  runtime::EventRecorder recorder(*client, options);  // not started: Events only queue
  InjectionEvents events(*client, recorder);

  policy::Decision refused;
  refused.verdict = policy::Verdict::Refused;
  refused.refusal = policy::Refusal{policy::RefusalReason::EngineMissing, "no engine"};
  for (const char* metadata :
       {R"({"name": 7, "ownerReferences": [{"controller": "yes", "kind": 5}]})",
        R"({"name": "a", "ownerReferences": {"controller": true}})",
        R"({"name": "a", "ownerReferences": ["x", {"controller": true, "kind": ["RS"]}]})",
        R"({"generateName": {}, "ownerReferences": [{"controller": true, "name": 1,
            "kind": "ReplicaSet", "apiVersion": "apps/v1"}]})"}) {
    AdmissionRequest request;
    request.uid = "u";
    request.namespace_name = "team-a";
    request.object = {{"metadata", Json::parse(metadata)}};
    events.onInjection(request, refused, std::chrono::nanoseconds(0));
    events.flushForTest();  // the worker is still there to drain the queue
  }
  events.stop();
}

}  // namespace
}  // namespace kvc::webhook
