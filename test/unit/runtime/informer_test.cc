// The informer against the fake API server: list then watch, relist on 410, resume after a
// dropped connection, resync on a fake clock, transforms and indexes.
#include "kvc/runtime/informer.h"
#include "kvc/kube/object.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "eventually.h"
#include "fake_apiserver.h"

namespace kvc::runtime {
namespace {

using testing::FakeApiServer;
using testing::FakeRequest;
using testing::FakeResourceServer;
using testing::ResponseWriter;

using testing::eventually;

Json configMap(const std::string& name, const std::string& value = "v") {
  return Json{{"metadata",
               {{"name", name},
                {"namespace", "a"},
                {"labels", {{"app", value}}},
                {"managedFields", Json::array({{{"manager", "kubectl"}}})}}},
              {"data", {{"key", value}}}};
}

struct Recorder {
  std::mutex mutex;
  std::vector<std::string> log;
  void add(std::string line) {
    std::lock_guard<std::mutex> guard(mutex);
    log.push_back(std::move(line));
  }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> guard(mutex);
    return log;
  }
  std::size_t count(const std::string& prefix) {
    std::lock_guard<std::mutex> guard(mutex);
    std::size_t n = 0;
    for (const auto& l : log) {
      n += l.rfind(prefix, 0) == 0 ? 1 : 0;
    }
    return n;
  }
  EventHandler handler() {
    EventHandler h;
    h.on_add = [this](const ObjectPtr& o, bool initial) {
      add(std::string(initial ? "add-initial " : "add ") + kube::object::name(*o));
    };
    h.on_update = [this](const ObjectPtr& old_object, const ObjectPtr& o) {
      add(std::string(old_object == o ? "resync " : "update ") + kube::object::name(*o));
    };
    h.on_delete = [this](const ObjectPtr& o, bool unknown) {
      add(std::string(unknown ? "delete-unknown " : "delete ") + kube::object::name(*o));
    };
    return h;
  }
};

class InformerTest : public ::testing::Test {
protected:
  InformerTest() : cms_("/api/v1/namespaces/a/configmaps", "v1", "ConfigMap") {
    server_.setHandler([this](const FakeRequest& r, ResponseWriter& out) { cms_.handle(r, out); });
    client_ = *kube::Client::create(server_.config());
  }
  ~InformerTest() override {
    cms_.closeWatches();
    server_.stop();
  }

  InformerOptions options() {
    InformerOptions o;
    o.resource = kube::resources::configMaps();
    o.namespace_name = "a";
    o.page_size = 2;
    o.random = [] { return 0.0; };
    return o;
  }

  FakeApiServer server_;
  FakeResourceServer cms_;
  kube::ClientPtr client_;
  FakeClock clock_;
};

TEST_F(InformerTest, ListsInPagesThenSyncs) {
  for (int i = 0; i < 5; ++i) {
    cms_.create(configMap("cm-" + std::to_string(i)));
  }
  Recorder rec;
  Informer informer(client_, options(), clock_);
  informer.addEventHandler(rec.handler());
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(5)));
  EXPECT_EQ(informer.cache().size(), 5U);
  EXPECT_EQ(rec.count("add-initial "), 5U);
  EXPECT_EQ(cms_.listCalls(), 3);  // 2 + 2 + 1
  const ObjectPtr cm = informer.cache().get("a/cm-3");
  ASSERT_NE(cm, nullptr);
  EXPECT_EQ((*cm)["kind"], "ConfigMap");                      // filled in for list items
  EXPECT_FALSE((*cm)["metadata"].contains("managedFields"));  // stripped before caching
  EXPECT_EQ(informer.stats().lists, 1U);
}

TEST_F(InformerTest, WatchEventsReachCacheAndHandlersInOrder) {
  cms_.create(configMap("x"));
  Recorder rec;
  Informer informer(client_, options(), clock_);
  informer.addEventHandler(rec.handler());
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(5)));
  ASSERT_TRUE(cms_.waitForOpenWatches(1));
  cms_.create(configMap("y"));
  cms_.update(configMap("x", "changed"));
  cms_.remove("y");
  ASSERT_TRUE(eventually([&] { return rec.lines().size() == 4; }));
  EXPECT_EQ(rec.lines(),
            (std::vector<std::string>{"add-initial x", "add y", "update x", "delete y"}));
  EXPECT_EQ((*informer.cache().get("a/x"))["data"]["key"], "changed");
  EXPECT_EQ(informer.cache().get("a/y"), nullptr);
  EXPECT_EQ(informer.stats().resource_version, std::to_string(cms_.resourceVersion()));
}

TEST_F(InformerTest, AnExpiredVersionRelistsAndInfersWhatWasMissed) {
  cms_.create(configMap("keep"));
  cms_.create(configMap("gone"));
  Recorder rec;
  Informer informer(client_, options(), clock_);
  informer.addEventHandler(rec.handler());
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(5)));
  ASSERT_TRUE(cms_.waitForOpenWatches(1));
  // Behind the informer's back: its watch ends, history changes and is compacted.
  cms_.holdWatches(true);
  cms_.closeWatches();
  ASSERT_TRUE(cms_.waitForWatchCalls(2));
  cms_.remove("gone");
  cms_.create(configMap("new"));
  cms_.update(configMap("keep", "v2"));
  cms_.compact();
  cms_.holdWatches(false);
  ASSERT_TRUE(eventually([&] { return informer.stats().relists_on_gone == 1; }));
  ASSERT_TRUE(eventually([&] { return rec.lines().size() == 5; }));
  EXPECT_EQ(informer.cache().size(), 2U);
  EXPECT_EQ((*informer.cache().get("a/keep"))["data"]["key"], "v2");
  EXPECT_EQ(rec.count("delete-unknown gone"), 1U);
  EXPECT_EQ(rec.count("add new"), 1U);
  EXPECT_EQ(rec.count("update keep"), 1U);
  EXPECT_EQ(informer.stats().lists, 2U);
  // And it keeps watching from the relist's version.
  ASSERT_TRUE(cms_.waitForOpenWatches(1));
  cms_.create(configMap("after"));
  ASSERT_TRUE(eventually([&] { return informer.cache().get("a/after") != nullptr; }));
}

TEST_F(InformerTest, ADroppedConnectionResumesFromTheLastVersionWithoutRelisting) {
  cms_.create(configMap("x"));
  Informer informer(client_, options(), clock_);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(5)));
  ASSERT_TRUE(cms_.waitForOpenWatches(1));
  cms_.abortWatches();  // the connection dies mid-stream
  // The informer backs off on its (fake) clock, then watches again.
  // Two waiters: the dispatcher, and the reflector in its backoff.
  ASSERT_TRUE(
      eventually([&] { return clock_.waiters() >= 2 && informer.stats().watch_failures == 1; }));
  cms_.create(configMap("during"));  // happens while the informer is away
  clock_.advance(std::chrono::seconds(2));
  ASSERT_TRUE(eventually([&] { return informer.cache().get("a/during") != nullptr; }));
  EXPECT_EQ(informer.stats().lists, 1U);  // no relist: the watch resumed
  EXPECT_EQ(informer.stats().relists_on_gone, 0U);
}

TEST_F(InformerTest, AServerTimeoutJustWatchesAgain) {
  Informer informer(client_, options(), clock_);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(5)));
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(cms_.waitForOpenWatches(1));
    cms_.closeWatches();
    ASSERT_TRUE(cms_.waitForWatchCalls(round + 2));
  }
  EXPECT_EQ(informer.stats().lists, 1U);
  EXPECT_EQ(informer.stats().watch_failures, 0U);
}

TEST_F(InformerTest, BookmarksMoveTheResumeVersion) {
  Informer informer(client_, options(), clock_);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(5)));
  ASSERT_TRUE(cms_.waitForOpenWatches(1));
  // Objects the informer does not see (another namespace in real life) move the version.
  cms_.create(configMap("x"));
  cms_.remove("x");
  ASSERT_TRUE(eventually([&] { return informer.stats().events == 2; }));
  cms_.bookmark();
  ASSERT_TRUE(eventually([&] { return informer.stats().bookmarks == 1; }));
  EXPECT_EQ(informer.stats().resource_version, std::to_string(cms_.resourceVersion()));
}

TEST_F(InformerTest, ListFailuresBackOffOnTheInjectedClock) {
  cms_.failLists(2, 500);
  cms_.create(configMap("x"));
  Informer informer(client_, options(), clock_);
  informer.start();
  ASSERT_TRUE(eventually([&] { return cms_.listCalls() == 1 && clock_.waiters() >= 2; }));
  EXPECT_FALSE(informer.hasSynced());
  clock_.advance(std::chrono::milliseconds(800));
  ASSERT_TRUE(eventually([&] { return cms_.listCalls() == 2 && clock_.waiters() >= 2; }));
  clock_.advance(std::chrono::milliseconds(1600));
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(5)));
  EXPECT_EQ(informer.cache().size(), 1U);
}

TEST_F(InformerTest, ResyncRedeliversEveryObjectEachPeriod) {
  cms_.create(configMap("a1"));
  cms_.create(configMap("a2"));
  InformerOptions o = options();
  o.resync_period = std::chrono::seconds(30);
  Recorder rec;
  Informer informer(client_, o, clock_);
  informer.addEventHandler(rec.handler());
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(5)));
  EXPECT_EQ(rec.count("resync "), 0U);
  clock_.advance(std::chrono::seconds(30));
  ASSERT_TRUE(eventually([&] { return rec.count("resync ") == 2; }));
  clock_.advance(std::chrono::seconds(30));
  ASSERT_TRUE(eventually([&] { return rec.count("resync ") == 4; }));
}

TEST_F(InformerTest, IndexesAndProjectionsApplyToCachedObjects) {
  cms_.create(configMap("one", "blue"));
  cms_.create(configMap("two", "red"));
  cms_.create(configMap("three", "blue"));
  InformerOptions o = options();
  o.transform = keepFields({"/data/key"});
  Informer informer(client_, o, clock_);
  informer.addIndex("app", [](const Json& obj) {
    std::vector<std::string> out;
    const auto& labels = obj["metadata"]["labels"];
    if (labels.contains("app")) {
      out.push_back(labels["app"].get<std::string>());
    }
    return out;
  });
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(5)));
  EXPECT_EQ(informer.cache().byIndex("app", "blue").size(), 2U);
  EXPECT_EQ(informer.cache().byIndex(kNamespaceIndex, "a").size(), 3U);
  const ObjectPtr one = informer.cache().get("a/one");
  ASSERT_NE(one, nullptr);
  EXPECT_EQ((*one)["data"]["key"], "blue");
  EXPECT_EQ((*one)["metadata"]["name"], "one");
  EXPECT_FALSE((*one)["metadata"].contains("managedFields"));
  ASSERT_TRUE(cms_.waitForOpenWatches(1));
  cms_.update(configMap("two", "blue"));
  ASSERT_TRUE(eventually([&] { return informer.cache().byIndex("app", "blue").size() == 3; }));
  EXPECT_TRUE(informer.cache().byIndex("app", "red").empty());
}

TEST_F(InformerTest, StopIsPromptWhileWatching) {
  Informer informer(client_, options(), clock_);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(5)));
  ASSERT_TRUE(cms_.waitForOpenWatches(1));
  const auto start = std::chrono::steady_clock::now();
  informer.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(TransformTest, KeepFieldsWalksArraysWithAStar) {
  Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "p"},
        {"namespace", "n"},
        {"annotations",
         {{"kubectl.kubernetes.io/last-applied-configuration", "{...}"}, {"a", "b"}}},
        {"managedFields", Json::array()}}},
      {"spec",
       {{"nodeName", "n1"},
        {"containers", Json::array({{{"name", "c1"}, {"image", "i1"}, {"env", Json::array({1, 2})}},
                                    {{"name", "c2"}, {"image", "i2"}}})}}},
      {"status", {{"phase", "Running"}, {"podIP", "10.0.0.1"}}}};
  Json stripped = pod;
  stripForCache(stripped);
  EXPECT_FALSE(stripped["metadata"].contains("managedFields"));
  EXPECT_EQ(stripped["metadata"]["annotations"], (Json{{"a", "b"}}));
  keepFields({"/spec/nodeName", "/spec/containers/*/name", "/status/phase"})(pod);
  EXPECT_EQ(pod, Json::parse(R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"name":"p","namespace":"n"},
      "spec":{"nodeName":"n1","containers":[{"name":"c1"},{"name":"c2"}]},
      "status":{"phase":"Running"}})"));
}

TEST(StoreTest, CommitReplacesAtOnceReindexesAndReturnsWhatIsGone) {
  Store store;
  store.addIndex("first-letter", [](const Json& o) {
    return std::vector<std::string>{kube::object::name(o).substr(0, 1)};
  });
  auto put = [&](const std::string& name) {
    const Json o = {{"metadata", {{"name", name}, {"resourceVersion", "1"}}}};
    return store.upsert(name, o, packObject(o));
  };
  EXPECT_EQ(put("apple"), nullptr);
  EXPECT_NE(put("apple"), nullptr);
  put("avocado");
  EXPECT_EQ(store.byIndex("first-letter", "a").size(), 2U);
  EXPECT_EQ(store.version("apple"), "1");
  const Json banana = {{"metadata", {{"name", "banana"}}}};
  const Json apple = {{"metadata", {{"name", "apple"}, {"resourceVersion", "2"}}}};
  store.stage("banana", banana, packObject(banana));
  store.stage("apple", apple, packObject(apple));
  EXPECT_EQ(store.size(), 2U);  // staging is invisible until the commit
  EXPECT_EQ(store.get("banana"), nullptr);
  auto gone = store.commitStaged();
  ASSERT_EQ(gone.size(), 1U);
  EXPECT_EQ(gone[0].first, "avocado");
  EXPECT_EQ((*unpackObject(gone[0].second))["metadata"]["name"], "avocado");
  EXPECT_EQ(store.byIndex("first-letter", "a").size(), 1U);
  EXPECT_EQ(store.byIndex("first-letter", "b").size(), 1U);
  EXPECT_EQ(store.version("apple"), "2");
  EXPECT_NE(store.remove("banana"), nullptr);
  EXPECT_EQ(store.size(), 1U);
  EXPECT_TRUE(store.byIndex("first-letter", "b").empty());
  EXPECT_TRUE(store.byIndex("unknown", "x").empty());
}

TEST(StoreTest, PackedObjectsRoundTripExactly) {
  const Json pod = Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "labels":{"z":"1","a":"2"}},"spec":{"n":-3,"f":1.5,"b":true,"nil":null,"arr":[1,"x",{}]}})");
  const Packed packed = packObject(pod);
  EXPECT_LT(packed->size(), pod.dump().size());
  EXPECT_EQ(*unpackObject(packed), pod);
  EXPECT_EQ(unpackObject(packed)->dump(), pod.dump());  // key order kept
  EXPECT_EQ(unpackObject(std::make_shared<const std::string>("\xc1")), nullptr);
}

TEST_F(InformerTest, ADeleteHandsHandlersTheEventsFinalState) {
  cms_.create(configMap("x", "cached"));
  std::mutex mutex;
  std::vector<std::string> seen;
  Informer informer(client_, options(), clock_);
  EventHandler h;
  h.on_delete = [&](const ObjectPtr& o, bool unknown) {
    std::lock_guard<std::mutex> guard(mutex);
    seen.push_back((*o)["data"]["key"].get<std::string>() + (unknown ? " unknown" : ""));
  };
  informer.addEventHandler(std::move(h));
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(5)));
  ASSERT_TRUE(cms_.waitForOpenWatches(1));
  // The API server's DELETED event carries the object as it was when it went (say, with its
  // last finalizer removed), which the cache never saw.
  Json final_state = configMap("x", "final");
  cms_.remove("x", final_state);
  ASSERT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> guard(mutex);
    return !seen.empty();
  }));
  std::lock_guard<std::mutex> guard(mutex);
  EXPECT_EQ(seen, std::vector<std::string>{"final"});
  EXPECT_EQ(informer.cache().get("a/x"), nullptr);
}

TEST_F(InformerTest, AThrowingHandlerIsCountedAndTheOthersStillRun) {
  Recorder rec;
  Informer informer(client_, options(), clock_);
  EventHandler throwing;
  throwing.on_add = [](const ObjectPtr& o, bool) {
    // A handler reading a field with the wrong type (nlohmann throws type_error).
    const std::string wrong = (*o)["metadata"].value("labels", std::string());
    (void)wrong;
  };
  informer.addEventHandler(std::move(throwing));
  informer.addEventHandler(rec.handler());
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(5)));
  ASSERT_TRUE(cms_.waitForOpenWatches(1));
  cms_.create(configMap("a1"));
  cms_.create(configMap("a2"));
  ASSERT_TRUE(eventually([&] { return rec.count("add ") == 2; }));
  EXPECT_EQ(informer.stats().handler_failures, 2U);
}

TEST(TransformTest, KeepFieldsNamesWhatItKeeps) {
  EXPECT_EQ(keepFields({"/spec/nodeName", "/status/phase"}).id,
            "keep:/spec/nodeName,/status/phase");
  EXPECT_EQ(stripTransform().id, "strip");
}

}  // namespace
}  // namespace kvc::runtime
