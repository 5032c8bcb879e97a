// Typed listers: cached JSON in, api:: types out; an object that does not decode is left out of
// lists and reported by get().
#include "kvc/runtime/lister.h"

#include <gtest/gtest.h>

#include "kvc/api/pool.h"
#include "kvc/kube/client.h"
#include "matchers.h"

namespace kvc::runtime {
namespace {

using kvc::testing::StatusIs;

void put(Store& store, const Json& object) {
  store.upsert(kube::object::key(object), object, packObject(object));
}

TEST(ListerTest, DecodesWhatTheCacheHolds) {
  Store store;
  store.addIndex("backend", [](const Json& o) {
    return std::vector<std::string>{o["spec"]["backends"][0].get<std::string>()};
  });
  put(store, Json::parse(R"({"metadata":{"name":"a"},"spec":{"backends":["b1"],
      "quota":{"total":"16Gi"}}})"));
  put(store, Json::parse(R"({"metadata":{"name":"c"},"spec":{"backends":["b2"],
      "quota":{"total":"1Gi"}}})"));
  Lister<api::KVCachePool> pools(store, &api::poolFromJson, "KVCachePool");
  auto a = pools.get("a");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(a->has_value());
  EXPECT_EQ((*a)->spec.quota_total, "16Gi");
  EXPECT_FALSE(pools.get("missing")->has_value());
  EXPECT_EQ(pools.list().size(), 2U);
  const auto on_b2 = pools.byIndex("backend", "b2");
  ASSERT_EQ(on_b2.size(), 1U);
  EXPECT_EQ(on_b2[0].metadata.name, "c");
}

TEST(ListerTest, AnObjectThatDoesNotDecodeIsLeftOutAndNamedByGet) {
  Store store;
  put(store, Json::parse(R"({"metadata":{"name":"good"},"spec":{"backends":["b"]}})"));
  put(store, Json::parse(R"({"metadata":{"name":"bad"},"spec":{"backends":[7]}})"));
  Lister<api::KVCachePool> pools(store, &api::poolFromJson, "KVCachePool");
  const auto all = pools.list();
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].metadata.name, "good");
  EXPECT_THAT(pools.get("bad"),
              StatusIs(StatusCode::InvalidArgument, ::testing::HasSubstr("spec.backends[0]")));
}

}  // namespace
}  // namespace kvc::runtime
