// An informer converging while 500 objects are created, changed and deleted around it.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "harness.h"
#include "kvc/kube/object.h"
#include "kvc/runtime/informer.h"
#include "parallel.h"

namespace kvc::it {
namespace {

using kube::Api;

Json binding(const std::string& name) {
  return Json{{"apiVersion", "worker.gpustack.ai/v1"},
              {"kind", "KVCachePoolBinding"},
              {"metadata", {{"name", name}, {"labels", {{"batch", "500"}}}}},
              {"spec",
               {{"poolRef", {{"name", "shared-dram"}}},
                {"quota", {{"ceiling", "1Gi"}}},
                {"domain", {{"blockSize", 16}, {"dtype", "fp8"}}}}}};
}

using kvc::testing::parallel;

TEST(InformerIntegrationTest, ConvergesAfter500ObjectsAreCreatedWhileItRuns) {
  const ClusterEnv env = ClusterEnv::fromEnvironment();
  auto client = adminClient(env);
  ASSERT_NE(client, nullptr);
  TestNamespace namespace_name(client, "informer");
  Api bindings(client, kube::resources::kvCachePoolBindings(), namespace_name.name());
  // Ten objects exist before the informer starts.
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(bindings.create(binding("pre-" + std::to_string(i))).ok());
  }
  runtime::InformerOptions options;
  options.resource = kube::resources::kvCachePoolBindings();
  options.namespace_name = namespace_name.name();
  options.page_size = 100;
  runtime::Informer informer(client, options);
  std::atomic<int> adds{0};
  std::atomic<int> updates{0};
  std::atomic<int> deletes{0};
  runtime::EventHandler handler;
  handler.on_add = [&](const runtime::ObjectPtr&, bool) { ++adds; };
  handler.on_update = [&](const runtime::ObjectPtr&, const runtime::ObjectPtr&) { ++updates; };
  handler.on_delete = [&](const runtime::ObjectPtr&, bool) { ++deletes; };
  informer.addEventHandler(handler);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(30)));
  EXPECT_EQ(informer.cache().size(), 10U);

  constexpr int kObjects = 500;
  std::atomic<int> failures{0};
  const auto t0 = std::chrono::steady_clock::now();
  parallel(kObjects, 4, [&](int i) {
    if (!bindings.create(binding("obj-" + std::to_string(i))).ok()) {
      ++failures;
    }
  });
  const auto created = std::chrono::steady_clock::now();
  ASSERT_EQ(failures, 0);
  ASSERT_TRUE(
      waitFor([&] { return informer.cache().size() == kObjects + 10; }, std::chrono::seconds(60)))
      << "cache holds " << informer.cache().size();
  const auto converged = std::chrono::steady_clock::now();
  // Every cached object is the server's latest version.
  auto truth = bindings.listAll({}, 250);
  ASSERT_TRUE(truth.ok());
  ASSERT_EQ(truth->items.size(), static_cast<std::size_t>(kObjects + 10));
  for (const Json& item : truth->items) {
    auto cached = informer.cache().get(kube::object::key(item));
    ASSERT_NE(cached, nullptr) << kube::object::key(item);
    EXPECT_EQ(kube::object::resourceVersion(*cached), kube::object::resourceVersion(item));
    EXPECT_FALSE((*cached)["metadata"].contains("managedFields"));
  }
  // Handlers run on their own thread and may trail the cache.
  EXPECT_TRUE(waitFor([&] { return adds == kObjects + 10; }, std::chrono::seconds(10))) << adds;

  // Changes and deletions converge too.
  parallel(kObjects, 4, [&](int i) {
    auto r = bindings.patch("obj-" + std::to_string(i),
                            kube::MergePatch{Json{{"spec", {{"quota", {{"ceiling", "2Gi"}}}}}}});
    if (!r.ok()) {
      ++failures;
    }
  });
  ASSERT_EQ(failures, 0);
  ASSERT_TRUE(waitFor(
      [&] {
        for (const auto& object : informer.cache().list()) {
          if (kube::object::name(*object).rfind("obj-", 0) == 0 &&
              (*object)["spec"]["quota"]["ceiling"] != "2Gi") {
            return false;
          }
        }
        return true;
      },
      std::chrono::seconds(60)));
  parallel(kObjects, 4, [&](int i) {
    if (!bindings.remove("obj-" + std::to_string(i)).ok()) {
      ++failures;
    }
  });
  ASSERT_EQ(failures, 0);
  ASSERT_TRUE(waitFor([&] { return informer.cache().size() == 10; }, std::chrono::seconds(60)));
  // The cache moves first: the watch thread counts an event just after applying it, and the
  // handlers run on their own thread, so both may trail the cache by the last event.
  EXPECT_TRUE(waitFor(
      [&] {
        return deletes == kObjects &&
               informer.stats().events >= static_cast<std::uint64_t>(3 * kObjects);
      },
      std::chrono::seconds(10)));
  const auto stats = informer.stats();
  EXPECT_EQ(stats.lists, 1U);
  EXPECT_EQ(stats.relists_on_gone, 0U);
  EXPECT_GE(stats.events, static_cast<std::uint64_t>(3 * kObjects));
  EXPECT_EQ(deletes, kObjects);
  std::cout << "[ MEASURED ] 500 creates in " << std::chrono::duration<double>(created - t0).count()
            << " s; cache converged "
            << std::chrono::duration<double>(converged - created).count() * 1000
            << " ms after the last create; " << stats.events << " watch events, " << updates
            << " updates delivered" << std::endl;
  informer.stop();
}

}  // namespace
}  // namespace kvc::it
