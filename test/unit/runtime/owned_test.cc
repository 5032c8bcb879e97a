// Owned children: the controller reference and the ownership note on every child, server-side
// apply under the one field manager, no request when the cache already holds the intent,
// pruning of what is no longer rendered, and never adopting a same-named object that is not ours.
#include "kvc/runtime/owned.h"
#include "kvc/kube/object.h"

#include <gtest/gtest.h>

#include <mutex>

#include "fake_apiserver.h"
#include "matchers.h"

namespace kvc::runtime {
namespace {

using kvc::testing::FakeApiServer;
using kvc::testing::FakeRequest;
using kvc::testing::ResponseWriter;
using kvc::testing::StatusIs;

const Json kOwner = Json::parse(R"({"apiVersion":"worker.gpustack.ai/v1","kind":"KVCacheBackend",
    "metadata":{"name":"mooncake-dram","uid":"uid-1"}})");

OwnedChild configMap(const std::string& name, const std::string& value) {
  OwnedChild child;
  child.resource = kube::resources::configMaps();
  child.role = "tenant-quota-policy";
  child.object = Json{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata",
                       {{"name", name},
                        {"namespace", "gpustack-system"},
                        {"labels", {{"app.kubernetes.io/instance", "mooncake-dram"}}}}},
                      {"data", {{"k", value}}}};
  return child;
}

// What the API server holds after applying `child` for kOwner.
Json asApplied(const OwnedChild& child) {
  Json object = child.object;
  object["metadata"]["uid"] = "child-" + kube::object::name(object);
  object["metadata"]["ownerReferences"] = Json::array({controllerReferenceTo(kOwner)});
  object["metadata"]["annotations"][std::string(kOwnershipNoteAnnotation)] =
      formatOwnershipNote({"KVCacheBackend", "mooncake-dram", child.role, child.group});
  object["metadata"]["resourceVersion"] = "5";
  return object;
}

class OwnedTest : public ::testing::Test {
protected:
  OwnedTest() : applier_(*kube::Client::create(server_.config())) {}
  FakeApiServer server_;
  OwnedApplier applier_;
};

TEST(OwnershipNoteTest, RoundTripsAndNamesTheOwner) {
  const OwnershipNote note{"KVCacheBackend", "mooncake-dram", "member", 1};
  EXPECT_EQ(
      formatOwnershipNote(note),
      R"({"type":"kvcache","kind":"KVCacheBackend","name":"mooncake-dram","role":"member","group":1})");
  EXPECT_EQ(parseOwnershipNote(formatOwnershipNote(note)), note);
  EXPECT_EQ(parseOwnershipNote(R"({"type":"helm"})"), std::nullopt);
  EXPECT_EQ(parseOwnershipNote("not json"), std::nullopt);
}

TEST(IntentTest, AnObjectTheServerDefaultedStillSatisfiesItsIntent) {
  const Json intent = Json::parse(R"({"spec":{"ports":[{"name":"rpc","port":50051}]}})");
  const Json live = Json::parse(R"({"spec":{"ports":[{"name":"rpc","port":50051,
      "protocol":"TCP","targetPort":50051}],"clusterIP":"10.96.0.5"}})");
  EXPECT_TRUE(intentSatisfied(intent, live));
  EXPECT_FALSE(intentSatisfied(Json::parse(R"({"spec":{"ports":[{"port":50052}]}})"), live));
  EXPECT_FALSE(intentSatisfied(Json::parse(R"({"spec":{"ports":[]}})"), live));
}

TEST(IntentTest, AZeroValueTheServerLeftOutIsSatisfied) {
  const Json live = Json::parse(R"({"spec":{"type":"ClusterIP"}})");
  EXPECT_TRUE(intentSatisfied(Json::parse(R"({"spec":{"publishNotReadyAddresses":false,
      "externalIPs":[],"sessionAffinityConfig":{},"loadBalancerIP":"","healthCheckNodePort":0}})"),
                              live));
  EXPECT_FALSE(intentSatisfied(Json::parse(R"({"spec":{"publishNotReadyAddresses":true}})"), live));
  EXPECT_FALSE(intentSatisfied(Json::parse(R"({"spec":{"type":""}})"), live))
      << "a present field must still match";
}

TEST(SelectorTest, EqualitiesMatchLabels) {
  const Json object = Json::parse(R"({"metadata":{"labels":{"a":"1","b":"2"}}})");
  EXPECT_TRUE(matchesSelector(object, ""));
  EXPECT_TRUE(matchesSelector(object, "a=1,b=2"));
  EXPECT_TRUE(matchesSelector(object, "a==1"));
  EXPECT_FALSE(matchesSelector(object, "a=1,b=3"));
  EXPECT_FALSE(matchesSelector(object, "c=1"));
}

TEST_F(OwnedTest, AChildIsAppliedWithTheControllerReferenceAndTheNote) {
  server_.setHandler([](const FakeRequest& r, ResponseWriter& out) {
    if (r.method == "GET") {
      out.respond(404, kvc::testing::statusBody(404, "NotFound", "not found"));
    } else {
      out.respond(200, r.body);
    }
  });
  OwnedSet set;
  set.children.push_back(configMap("mooncake-dram-tenant-quota-policy", "v1"));
  auto report = applier_.apply(kOwner, set);
  ASSERT_TRUE(report.ok()) << report.error().status().message();
  EXPECT_EQ(report->applied, std::vector<std::string>{
                                 "ConfigMap gpustack-system/mooncake-dram-tenant-quota-policy"});
  const auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 2U);  // the adoption check, then the apply
  EXPECT_EQ(requests[1].method, "PATCH");
  EXPECT_EQ(requests[1].path,
            "/api/v1/namespaces/gpustack-system/configmaps/mooncake-dram-tenant-quota-policy");
  EXPECT_EQ(requests[1].headers.at("content-type"), "application/apply-patch+yaml");
  EXPECT_EQ(requests[1].param("fieldManager"), "kvcache-operator");
  EXPECT_EQ(requests[1].param("force"), "");
  const Json body = Json::parse(requests[1].body);
  EXPECT_EQ(body["metadata"]["ownerReferences"], Json::parse(R"([{"apiVersion":
      "worker.gpustack.ai/v1","kind":"KVCacheBackend","name":"mooncake-dram","uid":"uid-1",
      "controller":true,"blockOwnerDeletion":true}])"));
  EXPECT_EQ(
      body["metadata"]["annotations"][std::string(kOwnershipNoteAnnotation)],
      R"({"type":"kvcache","kind":"KVCacheBackend","name":"mooncake-dram","role":"tenant-quota-policy"})");
  EXPECT_EQ(body["metadata"]["namespace"], "gpustack-system");  // the child's own namespace
}

TEST_F(OwnedTest, ASameNamedObjectWithoutOurNoteIsNeverAdopted) {
  server_.setHandler([](const FakeRequest& r, ResponseWriter& out) {
    if (r.method == "GET") {
      out.respond(200, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x",
          "namespace":"gpustack-system","uid":"someone-elses"},"data":{"mine":"yes"}})");
    } else {
      out.respond(500, "{}");
    }
  });
  OwnedSet set;
  set.children.push_back(configMap("other", "v"));  // would be fine alone
  set.children.push_back(configMap("x", "v"));
  auto report = applier_.apply(kOwner, set);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().kind(), OwnedErrorKind::NotOurs);
  EXPECT_EQ(report.error().object(), "ConfigMap gpustack-system/other");
  EXPECT_THAT(report.error().status(),
              StatusIs(StatusCode::FailedPrecondition, ::testing::HasSubstr("rename or remove")));
  for (const FakeRequest& r : server_.requests()) {
    EXPECT_EQ(r.method, "GET") << "nothing may be written after a refusal";
  }
}

TEST_F(OwnedTest, NothingIsSentWhenTheCacheHoldsTheIntent) {
  server_.setHandler([](const FakeRequest&, ResponseWriter& out) { out.respond(500, "{}"); });
  const OwnedChild child = configMap("c", "v1");
  Store cache;
  const Json live = asApplied(child);
  cache.upsert("gpustack-system/c", live, packObject(live));
  OwnedSet set;
  set.children.push_back(child);
  set.sources.push_back({kube::resources::configMaps(), "gpustack-system", &cache});
  auto report = applier_.apply(kOwner, set);
  ASSERT_TRUE(report.ok()) << report.error().status().message();
  EXPECT_EQ(report->unchanged, std::vector<std::string>{"ConfigMap gpustack-system/c"});
  EXPECT_EQ(server_.requestCount(), 0U);
}

TEST_F(OwnedTest, ACacheMissIsReadLiveSoALaggingCacheAdoptsNothing) {
  // The cache has not seen the same-named object someone created a moment ago; the live read
  // has, and the apply (which would adopt it) is never sent.
  server_.setHandler([](const FakeRequest& r, ResponseWriter& out) {
    if (r.method == "GET") {
      out.respond(200, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c",
          "namespace":"gpustack-system","uid":"someone-elses"},"data":{"mine":"yes"}})");
    } else {
      out.respond(200, r.body);
    }
  });
  Store cache;  // empty
  OwnedSet set;
  set.children.push_back(configMap("c", "v1"));
  set.sources.push_back({kube::resources::configMaps(), "gpustack-system", &cache});
  auto report = applier_.apply(kOwner, set);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().kind(), OwnedErrorKind::NotOurs);
  const auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_EQ(requests[0].method, "GET");
}

TEST_F(OwnedTest, ChildrenNoLongerRenderedArePrunedAndOthersLeftAlone) {
  Store cache;
  const Json keep = asApplied(configMap("keep", "v"));
  const Json stale = asApplied(configMap("stale", "v"));
  Json users = configMap("users", "v").object;  // matches the selector, carries no note
  users["metadata"]["uid"] = "u";
  Json sibling = asApplied(configMap("sibling", "v"));  // another backend's
  sibling["metadata"]["annotations"][std::string(kOwnershipNoteAnnotation)] =
      formatOwnershipNote({"KVCacheBackend", "other-backend", "tenant-quota-policy", {}});
  for (const Json& o : {keep, stale, users, sibling}) {
    cache.upsert(kube::object::key(o), o, packObject(o));
  }
  std::mutex mutex;
  std::vector<FakeRequest> deletes;
  server_.setHandler([&](const FakeRequest& r, ResponseWriter& out) {
    std::lock_guard<std::mutex> guard(mutex);
    if (r.method == "DELETE") {
      deletes.push_back(r);
    }
    out.respond(200, R"({"kind":"Status","status":"Success"})");
  });
  OwnedSet set;
  set.children.push_back(configMap("keep", "v"));
  set.sources.push_back({kube::resources::configMaps(), "gpustack-system", &cache});
  set.prune.push_back({kube::resources::configMaps(), "gpustack-system", &cache});
  set.selector = "app.kubernetes.io/instance=mooncake-dram";
  auto report = applier_.apply(kOwner, set);
  ASSERT_TRUE(report.ok()) << report.error().status().message();
  EXPECT_EQ(report->pruned, std::vector<std::string>{"ConfigMap gpustack-system/stale"});
  std::lock_guard<std::mutex> guard(mutex);
  ASSERT_EQ(deletes.size(), 1U);
  EXPECT_EQ(deletes[0].path, "/api/v1/namespaces/gpustack-system/configmaps/stale");
  const Json options = Json::parse(deletes[0].body);
  EXPECT_EQ(options["propagationPolicy"], "Background");
  EXPECT_EQ(options["preconditions"]["uid"], "child-stale");
}

}  // namespace
}  // namespace kvc::runtime
