// The pure request builder, tested by exact URL (kube-rs kube-core/src/request.rs habit).
#include "kvc/kube/request.h"

#include <gtest/gtest.h>

namespace kvc::kube {
namespace {

RequestBuilder bindings(std::string namespace_name = "team-a") {
  return RequestBuilder(resources::kvCachePoolBindings(), std::move(namespace_name));
}

TEST(RequestBuilderTest, PathsFollowGroupVersionAndScope) {
  EXPECT_EQ(bindings().collectionPath(),
            "/apis/worker.gpustack.ai/v1/namespaces/team-a/kvcachepoolbindings");
  EXPECT_EQ(bindings("").collectionPath(), "/apis/worker.gpustack.ai/v1/kvcachepoolbindings");
  EXPECT_EQ(RequestBuilder(resources::kvCachePools()).collectionPath(),
            "/apis/worker.gpustack.ai/v1/kvcachepools");
  EXPECT_EQ(RequestBuilder(resources::pods(), "default").collectionPath(),
            "/api/v1/namespaces/default/pods");
  EXPECT_EQ(RequestBuilder(resources::leases(), "gpustack-system").collectionPath(),
            "/apis/coordination.k8s.io/v1/namespaces/gpustack-system/leases");
  EXPECT_EQ(RequestBuilder(resources::events(), "x").collectionPath(),
            "/apis/events.k8s.io/v1/namespaces/x/events");
  EXPECT_EQ(RequestBuilder(resources::daemonSets(), "x").collectionPath(),
            "/apis/apps/v1/namespaces/x/daemonsets");
  EXPECT_EQ(RequestBuilder(resources::clusterRoleBindings()).collectionPath(),
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings");
}

TEST(RequestBuilderTest, GetOfANamedObject) {
  auto r = bindings().get("b1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->method, "GET");
  EXPECT_EQ(r->url, "/apis/worker.gpustack.ai/v1/namespaces/team-a/kvcachepoolbindings/b1");
  EXPECT_TRUE(r->body.empty());
}

TEST(RequestBuilderTest, ListEncodesSelectorsLimitAndContinue) {
  ListParams p;
  p.label_selector = "app in (a,b),tier!=db";
  p.field_selector = "metadata.name=x";
  p.limit = 50;
  p.continue_token = "abc/=+";
  auto r = RequestBuilder(resources::pods(), "ns").list(p);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->url,
            "/api/v1/namespaces/ns/pods?labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Ddb"
            "&fieldSelector=metadata.name%3Dx&limit=50&continue=abc%2F%3D%2B");
}

TEST(RequestBuilderTest, ListAtAResourceVersion) {
  ListParams p;
  p.resource_version = "0";
  auto r = RequestBuilder(resources::kvCachePools()).list(p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->url, "/apis/worker.gpustack.ai/v1/kvcachepools?resourceVersion=0");
  p.resource_version = "123";
  p.resource_version_match = "NotOlderThan";
  p.timeout_seconds = 10;
  r = RequestBuilder(resources::kvCachePools()).list(p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->url,
            "/apis/worker.gpustack.ai/v1/kvcachepools?resourceVersion=123"
            "&resourceVersionMatch=NotOlderThan&timeoutSeconds=10");
}

TEST(RequestBuilderTest, ListRefusesWhatTheServerWouldRefuse) {
  ListParams p;
  p.resource_version_match = "Exact";
  EXPECT_EQ(bindings().list(p).status().code(), StatusCode::InvalidArgument);
  p = {};
  p.continue_token = "t";
  p.resource_version = "5";
  EXPECT_EQ(bindings().list(p).status().code(), StatusCode::InvalidArgument);
  p = {};
  p.limit = 0;
  EXPECT_EQ(bindings().list(p).status().code(), StatusCode::InvalidArgument);
}

TEST(RequestBuilderTest, WatchAsksForBookmarksAndAServerTimeout) {
  WatchParams p;
  p.resource_version = "4711";
  p.timeout_seconds = 300;
  p.label_selector = "a=b";
  auto r = bindings("").watch(p);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->watch);
  EXPECT_EQ(r->url,
            "/apis/worker.gpustack.ai/v1/kvcachepoolbindings?watch=true&labelSelector=a%3Db"
            "&resourceVersion=4711&timeoutSeconds=300&allowWatchBookmarks=true");
  p.allow_bookmarks = false;
  p.label_selector.clear();
  p.resource_version.clear();
  r = bindings().watch(p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->url,
            "/apis/worker.gpustack.ai/v1/namespaces/team-a/kvcachepoolbindings"
            "?watch=true&timeoutSeconds=300");
}

TEST(RequestBuilderTest, CreateAndReplaceCarryFieldManagerAndDryRun) {
  PostParams p;
  p.field_manager = "kvcache-operator";
  p.dry_run = true;
  p.field_validation = "Strict";
  const Json obj = {{"metadata", {{"name", "b1"}}}};
  auto r = bindings().create(obj, p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->method, "POST");
  EXPECT_EQ(r->url,
            "/apis/worker.gpustack.ai/v1/namespaces/team-a/kvcachepoolbindings"
            "?dryRun=All&fieldManager=kvcache-operator&fieldValidation=Strict");
  EXPECT_EQ(r->content_type, "application/json");
  EXPECT_EQ(r->body, obj.dump());
  r = bindings().replace("b1", obj, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->method, "PUT");
  EXPECT_EQ(r->url, "/apis/worker.gpustack.ai/v1/namespaces/team-a/kvcachepoolbindings/b1");
  p.field_validation = "Loud";
  EXPECT_FALSE(bindings().create(obj, p).ok());
}

TEST(RequestBuilderTest, DeleteSendsDeleteOptionsWithPreconditions) {
  DeleteParams p;
  p.propagation_policy = "Foreground";
  p.grace_period_seconds = 0;
  p.preconditions = Preconditions{"u-1", "42"};
  auto r = bindings().remove("b1", p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->method, "DELETE");
  EXPECT_EQ(r->url, "/apis/worker.gpustack.ai/v1/namespaces/team-a/kvcachepoolbindings/b1");
  EXPECT_EQ(Json::parse(r->body),
            Json::parse(R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":
              "Foreground","gracePeriodSeconds":0,"preconditions":{"uid":"u-1",
              "resourceVersion":"42"}})"));
  p.propagation_policy = "Eventually";
  EXPECT_EQ(bindings().remove("b1", p).status().code(), StatusCode::InvalidArgument);
}

TEST(RequestBuilderTest, DeleteCollectionTakesListSelectors) {
  ListParams list;
  list.label_selector = "owner=me";
  auto r = bindings().removeCollection({}, list);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->url,
            "/apis/worker.gpustack.ai/v1/namespaces/team-a/kvcachepoolbindings"
            "?labelSelector=owner%3Dme");
}

TEST(RequestBuilderTest, PatchContentTypesFollowTheStrategy) {
  const Json body = {{"spec", {{"x", 1}}}};
  auto merge = bindings().patch("b1", MergePatch{body}, {});
  ASSERT_TRUE(merge.ok());
  EXPECT_EQ(merge->method, "PATCH");
  EXPECT_EQ(merge->content_type, "application/merge-patch+json");
  auto json =
      bindings().patch("b1", JsonPatch{Json::array({{{"op", "remove"}, {"path", "/spec/x"}}})}, {});
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json->content_type, "application/json-patch+json");
  EXPECT_EQ(json->body, R"([{"op":"remove","path":"/spec/x"}])");
  auto smp = RequestBuilder(resources::pods(), "a").patch("p", StrategicMergePatch{body}, {});
  ASSERT_TRUE(smp.ok());
  EXPECT_EQ(smp->content_type, "application/strategic-merge-patch+json");
}

TEST(RequestBuilderTest, ServerSideApplyNeedsAFieldManagerAndMayForce) {
  const Json intent = {{"apiVersion", "worker.gpustack.ai/v1"},
                       {"kind", "KVCachePoolBinding"},
                       {"metadata", {{"name", "b1"}}}};
  EXPECT_EQ(bindings().patch("b1", ApplyPatch{intent}, {}).status().code(),
            StatusCode::InvalidArgument);
  auto r = bindings().patch("b1", ApplyPatch{intent}, PatchParams::apply("kvcache-operator", true));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->url,
            "/apis/worker.gpustack.ai/v1/namespaces/team-a/kvcachepoolbindings/b1"
            "?force=true&fieldManager=kvcache-operator");
  EXPECT_EQ(r->content_type, "application/apply-patch+yaml");
  EXPECT_EQ(Json::parse(r->body), intent);
  PatchParams forced_merge;
  forced_merge.force = true;
  EXPECT_EQ(bindings().patch("b1", MergePatch{intent}, forced_merge).status().code(),
            StatusCode::InvalidArgument);
}

TEST(RequestBuilderTest, StatusSubresource) {
  auto get = bindings().getSubresource("status", "b1");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->url,
            "/apis/worker.gpustack.ai/v1/namespaces/team-a/kvcachepoolbindings/b1/status");
  auto apply = bindings().patchSubresource(
      "status", "b1", ApplyPatch{Json{{"status", {{"observedGeneration", 2}}}}},
      PatchParams::apply("m", true));
  ASSERT_TRUE(apply.ok());
  EXPECT_EQ(apply->url,
            "/apis/worker.gpustack.ai/v1/namespaces/team-a/kvcachepoolbindings/b1"
            "/status?force=true&fieldManager=m");
  auto put = RequestBuilder(resources::kvCachePools())
                 .replaceSubresource("status", "p", Json::object(), {});
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->url, "/apis/worker.gpustack.ai/v1/kvcachepools/p/status");
}

TEST(RequestBuilderTest, ScopeAndNamesAreChecked) {
  // A namespaced object needs a namespace; a cluster-scoped one must not have one.
  EXPECT_EQ(bindings("").get("b1").status().code(), StatusCode::InvalidArgument);
  EXPECT_EQ(RequestBuilder(resources::kvCachePools(), "x").list({}).status().code(),
            StatusCode::InvalidArgument);
  // Names cannot escape their path segment.
  EXPECT_FALSE(bindings().get("").ok());
  EXPECT_FALSE(bindings().get("a/b").ok());
  EXPECT_FALSE(bindings().get("..").ok());
  EXPECT_FALSE(bindings().get("a?watch=true").ok());
  EXPECT_FALSE(RequestBuilder(resources::pods(), "a/b").list({}).ok());
  EXPECT_FALSE(bindings().getSubresource("status/../x", "b").ok());
}

TEST(RequestBuilderTest, UrlEncodeKeepsOnlyUnreservedCharacters) {
  EXPECT_EQ(urlEncode("a-Z_0.9~"), "a-Z_0.9~");
  EXPECT_EQ(urlEncode("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
}

TEST(ResourceTest, TableFindsKindsByApiVersion) {
  const ResourceType* lease = findResource("coordination.k8s.io/v1", "Lease");
  ASSERT_NE(lease, nullptr);
  EXPECT_EQ(lease->plural, "leases");
  EXPECT_TRUE(lease->namespaced);
  EXPECT_EQ(findResource("v1", "Pod")->qualifiedName(), "pods");
  EXPECT_EQ(findResource("apps/v1", "Deployment")->qualifiedName(), "deployments.apps");
  EXPECT_FALSE(findResource("worker.gpustack.ai/v1", "KVCachePool")->namespaced);
  EXPECT_EQ(findResource("v1", "Lease"), nullptr);
}

}  // namespace
}  // namespace kvc::kube
