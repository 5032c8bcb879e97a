// What the ModelDeployment controller reads the cluster through: the informer caches behind
// policy::ClusterView (a key the cache lacks does not exist; an object that does not decode is an
// error, never "does not exist"), and the index and selector its watches map events with.
#include "internal/cache_cluster_view.h"

#include <gtest/gtest.h>

#include "kvc/controllers/model_deployment_controller.h"
#include "kvc/kube/client.h"
#include "kvc/kube/object.h"
#include "kvc/runtime/store.h"

namespace kvc::controllers {
namespace {

void put(runtime::Store& store, const Json& object) {
  store.upsert(kube::object::key(object), object, runtime::packObject(object));
}

Json binding(const std::string& namespace_name, const std::string& name) {
  return Json::parse(R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "KVCachePoolBinding",
    "metadata": {"namespace": ")" +
                     namespace_name + R"(", "name": ")" + name + R"("},
    "spec": {"poolRef": {"name": "shared-dram"}, "quota": {"ceiling": "8Gi"},
             "domain": {"blockSize": 64, "dtype": "bfloat16"}}})");
}

TEST(CacheClusterView, ReadsBindingsByNamespaceAndNameAndTreatsAMissAsAbsent) {
  runtime::Store bindings, pools, backends;
  put(bindings, binding("team-a", "team-a"));
  const internal::CacheClusterView view(bindings, pools, backends);

  auto found = view.binding("team-a", "team-a");
  ASSERT_TRUE(found.ok()) << found.status().toString();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->spec.pool_ref, "shared-dram");

  auto other_namespace = view.binding("team-b", "team-a");
  ASSERT_TRUE(other_namespace.ok());
  EXPECT_FALSE(other_namespace->has_value());
  auto pool = view.pool("shared-dram");
  ASSERT_TRUE(pool.ok());
  EXPECT_FALSE(pool->has_value());
}

TEST(CacheClusterView, AnObjectThatDoesNotDecodeIsAnErrorNeverAbsent) {
  runtime::Store bindings, pools, backends;
  Json broken = binding("team-a", "team-a");
  broken["spec"]["quota"]["ceiling"] = Json::array();
  put(bindings, broken);
  const internal::CacheClusterView view(bindings, pools, backends);
  EXPECT_FALSE(view.binding("team-a", "team-a").ok());
}

TEST(ModelDeploymentWiring, IndexesADeploymentByItsBindingKey) {
  Json md = Json::parse(R"({"metadata": {"namespace": "team-a", "name": "qwen-chat"},
    "spec": {"kvCache": {"poolRef": {"name": "team-a"}}}})");
  EXPECT_EQ(modelDeploymentBinding(md), std::vector<std::string>{"team-a/team-a"});
  md["spec"].erase("kvCache");
  EXPECT_TRUE(modelDeploymentBinding(md).empty());
  EXPECT_EQ(roleWorkloadSelector(), "app.kubernetes.io/name=model-deployment");
}

}  // namespace
}  // namespace kvc::controllers
