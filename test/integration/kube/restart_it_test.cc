// Destructive tests on a dedicated cluster (test/cluster/cluster.sh up DIR), so that the shared
// cluster of the ctest run is never disturbed: an informer's watch survives kube-apiserver
// restarts, and a forced 410 Gone (etcd compaction) makes it relist.
#include <gtest/gtest.h>
#include <signal.h>

#include <iomanip>

#include "harness.h"
#include "kvc/kube/object.h"
#include "kvc/runtime/informer.h"

namespace kvc::it {
namespace {

using kube::Api;

DedicatedCluster* g_cluster = nullptr;

class ClusterEnvironment : public ::testing::Environment {
public:
  void SetUp() override {
    // (KVC_SKIP_INTEGRATION=1 never gets here: main() exits 77 first.)
    cluster_ = std::make_unique<DedicatedCluster>(buildDir() + "/cluster-kube-restart");
    g_cluster = cluster_.get();
  }
  void TearDown() override {
    g_cluster = nullptr;
    cluster_.reset();
  }

private:
  std::unique_ptr<DedicatedCluster> cluster_;
};

const ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new ClusterEnvironment);

Json configMap(const std::string& name, const std::string& value, bool watched = true) {
  Json labels = Json::object();
  if (watched) {
    labels["watched"] = "yes";
  }
  return Json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"name", name}, {"labels", labels}}},
              {"data", {{"v", value}}}};
}

// Retries an API call while the freshly restarted apiserver settles.
template <typename F>
bool retrying(F&& call) {
  return waitFor([&] { return call().ok(); }, std::chrono::seconds(60),
                 std::chrono::milliseconds(200));
}

// True when the informer's cache equals the server's list (names and versions).
bool converged(const runtime::Informer& informer, const Api& api, const std::string& selector) {
  kube::ListParams params;
  params.label_selector = selector;
  auto list = api.list(params);
  if (!list.ok() || list->items.size() != informer.cache().size()) {
    return false;
  }
  for (const Json& item : list->items) {
    auto cached = informer.cache().get(kube::object::key(item));
    if (!cached || kube::object::resourceVersion(*cached) != kube::object::resourceVersion(item)) {
      return false;
    }
  }
  return true;
}

TEST(ApiserverRestartTest, AnInformerSurvivesGracefulAndAbruptApiserverRestarts) {
  ASSERT_NE(g_cluster, nullptr);
  auto client = adminClient(g_cluster->env());
  TestNamespace namespace_name(client, "restart");
  Api cms(client, kube::resources::configMaps(), namespace_name.name());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(cms.create(configMap("cm-" + std::to_string(i), "v1")).ok());
  }
  runtime::InformerOptions options;
  options.resource = kube::resources::configMaps();
  options.namespace_name = namespace_name.name();
  options.label_selector = "watched=yes";
  runtime::Informer informer(client, options);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(30)));

  for (const bool abrupt : {false, true}) {
    const double away = g_cluster->restartApiserver(abrupt);
    std::cout << "[ MEASURED ] kube-apiserver " << (abrupt ? "SIGKILL" : "SIGTERM")
              << " restart: back after " << std::fixed << std::setprecision(1) << away << " s"
              << std::endl;
    const std::string round = abrupt ? "v3" : "v2";
    // Changes after the restart: creates, updates and deletes.
    for (int i = 0; i < 5; ++i) {
      const std::string name = (abrupt ? "late-" : "new-") + std::to_string(i);
      ASSERT_TRUE(retrying([&] { return cms.create(configMap(name, round)); }));
    }
    for (int i = 0; i < 5; ++i) {
      const std::string name = "cm-" + std::to_string(i);
      ASSERT_TRUE(retrying([&] {
        return cms.patch(name, kube::MergePatch{Json{{"data", {{"v", round}}}}});
      }));
    }
    ASSERT_TRUE(retrying([&] { return cms.remove("cm-" + std::to_string(abrupt ? 19 : 18)); }));
    ASSERT_TRUE(waitFor([&] { return converged(informer, cms, "watched=yes"); },
                        std::chrono::seconds(90), std::chrono::milliseconds(200)))
        << "cache " << informer.cache().size();
  }
  const runtime::InformerStats stats = informer.stats();
  std::cout << "[ MEASURED ] informer across two restarts: " << stats.watches << " watches, "
            << stats.watch_failures << " failed, " << stats.lists << " lists ("
            << stats.relists_on_gone << " after 410), " << stats.events << " events" << std::endl;
  EXPECT_GE(stats.watches, 3U);
  EXPECT_EQ(informer.cache().size(), 28U);  // 20 + 5 + 5 - 2
  informer.stop();
}

TEST(ApiserverRestartTest, ACompactedVersionIsGoneAndTheInformerRelists) {
  ASSERT_NE(g_cluster, nullptr);
  auto client = adminClient(g_cluster->env());
  TestNamespace namespace_name(client, "gone");
  Api cms(client, kube::resources::configMaps(), namespace_name.name());
  ASSERT_TRUE(cms.create(configMap("watched-0", "v1")).ok());
  runtime::InformerOptions options;
  options.resource = kube::resources::configMaps();
  options.namespace_name = namespace_name.name();
  options.label_selector = "watched=yes";
  runtime::Informer informer(client, options);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(30)));
  auto snapshot = cms.list();
  ASSERT_TRUE(snapshot.ok());
  const std::string old_version = snapshot->resource_version;

  // History moves on outside the informer's selector, then etcd forgets it.
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(cms.create(configMap("unwatched-" + std::to_string(i), "x", false)).ok());
  }
  const std::int64_t compacted = g_cluster->compactEtcd();
  std::cout << "[ MEASURED ] etcd compacted at revision " << compacted << "; informer at "
            << informer.stats().resource_version << std::endl;
  ASSERT_GT(compacted, std::stoll(old_version));
  // A fresh apiserver has no watch cache older than the compaction (SIGKILL: no farewell
  // bookmarks), so the informer's resume from its old version is answered 410.
  g_cluster->restartApiserver(/*kill=*/true);

  // The raw client sees the 410 as a typed error (an ERROR event or an HTTP 410).
  std::optional<kube::ApiError> gone;
  kube::WatchParams params;
  params.resource_version = old_version;
  params.timeout_seconds = 10;
  auto end = cms.watch(params, [&](kube::WatchEvent&& e) {
    if (e.type == kube::WatchEventType::Error) {
      gone = kube::errorFromStatus(e.object);
      return false;
    }
    return true;
  });
  if (!end.ok()) {
    gone = end.error();
  }
  ASSERT_TRUE(gone.has_value()) << "a watch from compacted version " << old_version
                                << " was served";
  EXPECT_TRUE(gone->isGone()) << gone->describe();
  EXPECT_EQ(gone->httpStatus(), 410);
  EXPECT_EQ(gone->status().code(), StatusCode::Aborted);

  // The informer relists and converges, including a change made after the restart.
  ASSERT_TRUE(retrying([&] { return cms.create(configMap("watched-1", "v1")); }));
  ASSERT_TRUE(
      waitFor([&] { return informer.stats().relists_on_gone >= 1; }, std::chrono::seconds(90)))
      << "relists " << informer.stats().relists_on_gone << ", watch failures "
      << informer.stats().watch_failures;
  ASSERT_TRUE(
      waitFor([&] { return converged(informer, cms, "watched=yes"); }, std::chrono::seconds(60)));
  EXPECT_EQ(informer.cache().size(), 2U);
  std::cout << "[ MEASURED ] after the forced 410: " << informer.stats().lists << " lists, "
            << informer.stats().relists_on_gone << " relist(s) on 410" << std::endl;
  informer.stop();
}

}  // namespace
}  // namespace kvc::it
