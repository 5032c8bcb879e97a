// Typed listers: cached JSON in, api:: types out, each stored version decoded once; an object
// that does not decode is left out of lists and reported by get().
#include "kvc/runtime/lister.h"
#include "kvc/kube/object.h"

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
  ASSERT_NE(*a, nullptr);
  EXPECT_EQ((*a)->spec.quota_total, "16Gi");
  EXPECT_EQ(*pools.get("missing"), nullptr);
  EXPECT_EQ(pools.list().size(), 2U);
  const auto on_b2 = pools.byIndex("backend", "b2");
  ASSERT_EQ(on_b2.size(), 1U);
  EXPECT_EQ(on_b2[0]->metadata.name, "c");
}

TEST(ListerTest, AVersionIsDecodedOnceAndAnUpdateIsSeen) {
  Store store;
  store.addIndex("backend", [](const Json& o) {
    return std::vector<std::string>{o["spec"]["backends"][0].get<std::string>()};
  });
  put(store, Json::parse(R"({"metadata":{"name":"a","resourceVersion":"1"},
      "spec":{"backends":["b1"],"quota":{"total":"1Gi"}}})"));
  int decodes = 0;
  Lister<api::KVCachePool> pools(
      store,
      [&decodes](const Json& o) {
        ++decodes;
        return api::poolFromJson(o);
      },
      "KVCachePool");
  const auto first = pools.byIndex("backend", "b1");
  const auto again = pools.byIndex("backend", "b1");
  ASSERT_EQ(first.size(), 1U);
  ASSERT_EQ(again.size(), 1U);
  EXPECT_EQ(first[0], again[0]);  // the same decoded object
  EXPECT_EQ(*pools.get("a"), first[0]);
  EXPECT_EQ(decodes, 1);

  put(store, Json::parse(R"({"metadata":{"name":"a","resourceVersion":"2"},
      "spec":{"backends":["b1"],"quota":{"total":"2Gi"}}})"));
  const auto updated = pools.byIndex("backend", "b1");
  ASSERT_EQ(updated.size(), 1U);
  EXPECT_EQ(updated[0]->spec.quota_total, "2Gi");
  EXPECT_EQ(first[0]->spec.quota_total, "1Gi");  // what a reader got stays as it was
  EXPECT_EQ(decodes, 2);

  store.remove("a");
  EXPECT_TRUE(pools.list().empty());
  EXPECT_EQ(*pools.get("a"), nullptr);
}

TEST(ListerTest, AnObjectThatDoesNotDecodeIsLeftOutAndNamedByGet) {
  Store store;
  put(store, Json::parse(R"({"metadata":{"name":"good"},"spec":{"backends":["b"]}})"));
  put(store, Json::parse(R"({"metadata":{"name":"bad"},"spec":{"backends":[7]}})"));
  Lister<api::KVCachePool> pools(store, &api::poolFromJson, "KVCachePool");
  const auto all = pools.list();
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0]->metadata.name, "good");
  EXPECT_THAT(pools.get("bad"),
              StatusIs(StatusCode::InvalidArgument, ::testing::HasSubstr("spec.backends[0]")));
}

}  // namespace
}  // namespace kvc::runtime
