// The controller toolkit end to end on the real API server, through a toy reconciler kept in
// the test tree (not shipped): a cluster-scoped custom object `Toy` owns `spec.count` ConfigMaps
// in a namespace. It proves, against kube-apiserver and kube-controller-manager:
//   - applyOwned: children applied with the controller reference and the ownership note, pruned
//     when no longer rendered, never adopted when a same-named object is someone else's;
//   - requestForOwner: an edit of a child (namespaced) requeues its cluster-scoped owner;
//   - the StatusWriter: status written once per change (observedGeneration stamped), a pass over
//     an unchanged world writes nothing;
//   - garbage collection of the children once the owner is deleted.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "harness.h"
#include "kvc/api/condition.h"
#include "kvc/kube/object.h"
#include "kvc/kube/time.h"
#include "kvc/runtime/controller.h"
#include "kvc/runtime/informer.h"
#include "kvc/runtime/metrics.h"
#include "kvc/runtime/owned.h"
#include "kvc/runtime/status_writer.h"

namespace kvc::it {
namespace {

using kube::Api;

const kube::ResourceType kToys{"toys.kvcache.gpustack.ai", "v1", "Toy", "toys", false};

const Json kToyCrd = Json::parse(R"({
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "toys.toys.kvcache.gpustack.ai"},
  "spec": {"group": "toys.kvcache.gpustack.ai", "scope": "Cluster",
    "names": {"kind": "Toy", "listKind": "ToyList", "plural": "toys", "singular": "toy"},
    "versions": [{"name": "v1", "served": true, "storage": true,
      "subresources": {"status": {}},
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}})");

std::string childName(const std::string& toy, int i) { return toy + "-" + std::to_string(i); }

// Renders spec.count ConfigMaps with spec.value in spec.namespace; reports Ready with the count.
class ToyReconciler final : public runtime::Reconciler {
public:
  ToyReconciler(kube::ClientPtr client, const runtime::Cache& toys,
                const runtime::Cache& config_maps, std::string namespace_name,
                runtime::Registry& metrics)
      : applier_(client),
        writer_(client, kToys, &metrics),
        toys_(toys),
        config_maps_(config_maps),
        namespace_(std::move(namespace_name)) {}

  Result<runtime::Action> reconcile(const runtime::Request& request,
                                    std::stop_token stop) override {
    runtime::ObjectPtr toy = toys_.get(request.key());
    if (!toy || kube::object::isDeleting(*toy)) {
      return runtime::Action::done();  // children go by garbage collection
    }
    ++passes;
    const Json& spec = (*toy)["spec"];
    runtime::OwnedSet set;
    for (int i = 0; i < spec.value("count", 0); ++i) {
      runtime::OwnedChild child;
      child.resource = kube::resources::configMaps();
      child.role = "toy";
      child.force = true;  // the whole ConfigMap is ours
      child.object = Json{{"apiVersion", "v1"},
                          {"kind", "ConfigMap"},
                          {"metadata",
                           {{"name", childName(request.name, i)},
                            {"namespace", namespace_},
                            {"labels", {{"toy", request.name}}}}},
                          {"data", {{"value", spec.value("value", std::string())}}}};
      set.children.push_back(std::move(child));
    }
    set.sources.push_back({kube::resources::configMaps(), namespace_, &config_maps_});
    set.prune.push_back({kube::resources::configMaps(), namespace_, &config_maps_});
    set.selector = "toy=" + request.name;
    std::vector<api::Condition> conditions;
    if (toy->contains("status")) {
      auto decoded = api::conditionsFromJson((*toy)["status"].value("conditions", Json()), "c");
      if (decoded.ok()) {
        conditions = *decoded;
      }
    }
    const std::string now = kube::formatTime(std::chrono::system_clock::now());
    const std::int64_t generation = kube::object::generation(*toy);
    Json status = Json::object();
    auto applied = applier_.apply(*toy, set, stop);
    if (!applied.ok()) {
      (void)api::setCondition(conditions,
                              api::makeCondition("Ready", api::kConditionFalse, "NotOurs",
                                                 applied.error().status().message()),
                              generation, now);
      status["conditions"] = api::conditionsToJson(conditions);
      KVC_ASSIGN_OR_RETURN(runtime::StatusWrite w, writer_.write(*toy, status, stop));
      (void)w;
      return applied.error().status();
    }
    (void)api::setCondition(conditions,
                            api::makeCondition("Ready", api::kConditionTrue, "Rendered",
                                               std::to_string(set.children.size()) + " children"),
                            generation, now);
    status["children"] = static_cast<int>(set.children.size());
    status["conditions"] = api::conditionsToJson(conditions);
    KVC_ASSIGN_OR_RETURN(runtime::StatusWrite w, writer_.write(*toy, status, stop));
    (void)w;
    return runtime::Action::done();
  }

  std::atomic<int> passes{0};

private:
  runtime::OwnedApplier applier_;
  runtime::StatusWriter writer_;
  const runtime::Cache& toys_;
  const runtime::Cache& config_maps_;
  std::string namespace_;
};

double metric(runtime::Registry& registry, const std::string& series) {
  const std::string text = registry.render();
  const std::size_t at = text.find(series + " ");
  return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size() + 1));
}

class ToyControllerTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    const ClusterEnv env = ClusterEnv::fromEnvironment();
    auto client = adminClient(env);
    Api crds(client, kube::resources::customResourceDefinitions());
    auto applied = crds.apply(kToyCrd, "kvcache-test", /*force=*/true);
    ASSERT_TRUE(applied.ok()) << applied.error().describe();
    ASSERT_TRUE(waitFor(
        [&] {
          auto crd = crds.get("toys.toys.kvcache.gpustack.ai");
          if (!crd.ok()) {
            return false;
          }
          for (const Json& c : (*crd)["status"].value("conditions", Json::array())) {
            if (c["type"] == "Established" && c["status"] == "True") {
              return true;
            }
          }
          return false;
        },
        std::chrono::seconds(60)));
  }

  void SetUp() override {
    env_ = ClusterEnv::fromEnvironment();
    client_ = adminClient(env_);
    ns_ = std::make_unique<TestNamespace>(client_, "toy");
    runtime::InformerOptions toys;
    toys.resource = kToys;
    toy_informer_ = std::make_unique<runtime::Informer>(client_, toys);
    runtime::InformerOptions config_maps;
    config_maps.resource = kube::resources::configMaps();
    config_maps.namespace_name = ns_->name();
    cm_informer_ = std::make_unique<runtime::Informer>(client_, config_maps);
    reconciler_ = std::make_shared<ToyReconciler>(client_, toy_informer_->cache(),
                                                  cm_informer_->cache(), ns_->name(), registry_);
    runtime::ControllerOptions options;
    options.name = "toy";
    options.metrics = &registry_;
    controller_ = std::make_unique<runtime::Controller>(std::move(options), reconciler_);
    controller_->watch(*toy_informer_, &runtime::requestForObject,
                       &runtime::specOrLifecycleChanged);
    controller_->watch(*cm_informer_, runtime::requestForOwner(kToys));
    toy_informer_->start();
    cm_informer_->start();
    ASSERT_TRUE(toy_informer_->waitForSync(std::chrono::seconds(30)));
    ASSERT_TRUE(cm_informer_->waitForSync(std::chrono::seconds(30)));
    controller_->start();
  }

  void TearDown() override {
    controller_->stop();
    toy_informer_->stop();
    cm_informer_->stop();
    Api toys(client_, kToys);
    for (const std::string& name : created_) {
      (void)toys.remove(name);
    }
  }

  std::string createToy(const std::string& prefix, int count, const std::string& value) {
    const std::string name = uniqueName(prefix);
    Json toy = {{"apiVersion", kToys.apiVersion()},
                {"kind", "Toy"},
                {"metadata", {{"name", name}}},
                {"spec", {{"count", count}, {"value", value}}}};
    auto created = Api(client_, kToys).create(toy);
    EXPECT_TRUE(created.ok()) << created.error().describe();
    created_.push_back(name);
    return name;
  }

  std::optional<Json> child(const std::string& name) {
    auto read = Api(client_, kube::resources::configMaps(), ns_->name()).getOptional(name);
    return read.ok() ? *read : std::nullopt;
  }

  Json toy(const std::string& name) { return *Api(client_, kToys).get(name); }

  double statusWrites() {
    return metric(registry_, R"(kvcache_status_writes_total{resource="toys",outcome="written"})");
  }

  ClusterEnv env_;
  kube::ClientPtr client_;
  std::unique_ptr<TestNamespace> ns_;
  runtime::Registry registry_;
  std::unique_ptr<runtime::Informer> toy_informer_;
  std::unique_ptr<runtime::Informer> cm_informer_;
  std::shared_ptr<ToyReconciler> reconciler_;
  std::unique_ptr<runtime::Controller> controller_;
  std::vector<std::string> created_;
};

TEST_F(ToyControllerTest, ChildrenAreAppliedOwnedPrunedAndCollected) {
  const std::string name = createToy("toy", 2, "a");
  ASSERT_TRUE(waitFor([&] { return child(childName(name, 0)) && child(childName(name, 1)); },
                      std::chrono::seconds(30)));
  const Json c0 = *child(childName(name, 0));
  const Json& owner = c0["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "Toy");
  EXPECT_EQ(owner["name"], name);
  EXPECT_EQ(owner["uid"], toy(name)["metadata"]["uid"]);
  EXPECT_EQ(owner["controller"], true);
  EXPECT_EQ(owner["blockOwnerDeletion"], true);
  EXPECT_TRUE(runtime::carriesNoteFor(c0, toy(name)));
  EXPECT_EQ(c0["data"]["value"], "a");

  // The status, written once for this generation.
  ASSERT_TRUE(waitFor([&] { return toy(name)["status"].value("children", 0) == 2; },
                      std::chrono::seconds(30)));
  EXPECT_EQ(toy(name)["status"]["observedGeneration"], toy(name)["metadata"]["generation"]);
  const double writes = statusWrites();
  const std::string version = kube::object::resourceVersion(toy(name));
  // More passes over an unchanged world (the children's own events, a forced requeue) write
  // nothing: the resourceVersion does not move.
  const int passes = reconciler_->passes;
  controller_->enqueue(runtime::Request{"", name});
  ASSERT_TRUE(waitFor([&] { return reconciler_->passes > passes; }, std::chrono::seconds(10)));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(statusWrites(), writes);
  EXPECT_EQ(kube::object::resourceVersion(toy(name)), version);

  // A child edited by hand: the namespaced child maps to its cluster-scoped owner, which puts
  // the child back.
  Json edited = *child(childName(name, 1));
  edited["data"]["value"] = "tampered";
  ASSERT_TRUE(Api(client_, kube::resources::configMaps(), ns_->name())
                  .replace(childName(name, 1), edited)
                  .ok());
  ASSERT_TRUE(waitFor(
      [&] {
        auto c = child(childName(name, 1));
        return c && (*c)["data"]["value"] == "a";
      },
      std::chrono::seconds(30)));

  // One child fewer: the other is pruned; the status is written again, once.
  Json scaled = toy(name);
  scaled["spec"]["count"] = 1;
  ASSERT_TRUE(Api(client_, kToys).replace(name, scaled).ok());
  ASSERT_TRUE(waitFor([&] { return !child(childName(name, 1)); }, std::chrono::seconds(30)));
  EXPECT_TRUE(child(childName(name, 0)).has_value());
  ASSERT_TRUE(waitFor([&] { return toy(name)["status"].value("children", 0) == 1; },
                      std::chrono::seconds(30)));
  EXPECT_EQ(toy(name)["status"]["observedGeneration"], toy(name)["metadata"]["generation"]);
  EXPECT_EQ(statusWrites(), writes + 1);

  // The owner goes: kube-controller-manager's garbage collector takes the children.
  ASSERT_TRUE(Api(client_, kToys).remove(name).ok());
  ASSERT_TRUE(waitFor([&] { return !child(childName(name, 0)); }, std::chrono::seconds(60)))
      << "the child outlived its owner";
}

TEST_F(ToyControllerTest, ASameNamedConfigMapThatIsNotOursIsNeverAdopted) {
  const std::string name = uniqueName("toy");
  const Json theirs = {{"apiVersion", "v1"},
                       {"kind", "ConfigMap"},
                       {"metadata", {{"name", childName(name, 0)}, {"labels", {{"toy", name}}}}},
                       {"data", {{"mine", "yes"}}}};
  ASSERT_TRUE(Api(client_, kube::resources::configMaps(), ns_->name()).create(theirs).ok());
  ASSERT_TRUE(waitFor([&] { return cm_informer_->cache().size() > 0; }, std::chrono::seconds(10)));
  Json toy_object = {{"apiVersion", kToys.apiVersion()},
                     {"kind", "Toy"},
                     {"metadata", {{"name", name}}},
                     {"spec", {{"count", 1}, {"value", "a"}}}};
  ASSERT_TRUE(Api(client_, kToys).create(toy_object).ok());
  created_.push_back(name);
  ASSERT_TRUE(waitFor(
      [&] {
        const Json t = toy(name);
        if (!t.contains("status")) {
          return false;
        }
        for (const Json& c : t["status"].value("conditions", Json::array())) {
          if (c["type"] == "Ready" && c["reason"] == "NotOurs") {
            return c["message"].get<std::string>().find("rename or remove") != std::string::npos;
          }
        }
        return false;
      },
      std::chrono::seconds(30)))
      << "toy: " << toy(name).dump() << "\npasses: " << reconciler_->passes << "\nmetrics:\n"
      << registry_.render();
  const Json still = *child(childName(name, 0));
  EXPECT_EQ(still["data"], Json::parse(R"({"mine":"yes"})"));
  EXPECT_FALSE(still["metadata"].contains("ownerReferences"));
}

// A seeded child (OwnedApplier::seed: created once, never rewritten) against the real API
// server: a second seed leaves it as it is; its later owner's server-side apply must be forced,
// since the create's field manager operation owns the data (issue 27 §4: the backend seeds the
// tenant-quota policy, the pool controller writes it from then on).
TEST_F(ToyControllerTest, ASeededChildIsCreatedOnceAndTakenOverByAForcedApply) {
  const std::string name = createToy("seeded", 0, "a");
  const Json owner = toy(name);
  const std::string seed_name = "seed-" + name;
  const auto config_map = [&](const std::string& value) {
    return Json{{"apiVersion", "v1"},
                {"kind", "ConfigMap"},
                {"metadata",
                 {{"name", seed_name},
                  {"namespace", ns_->name()},
                  // Not the toy's selector: its controller would prune the seed.
                  {"labels", {{"seeded-by", name}}}}},
                {"data", {{"value", value}}}};
  };
  runtime::OwnedApplier applier(client_);
  const runtime::ChildSource source{kube::resources::configMaps(), ns_->name(),
                                    &cm_informer_->cache()};
  auto seeded = applier.seed(
      owner, {kube::resources::configMaps(), config_map("seed"), "seed", std::nullopt, false},
      source);
  ASSERT_TRUE(seeded.ok()) << seeded.error().status().message();
  EXPECT_EQ(seeded->applied.size(), 1U);
  ASSERT_TRUE(child(seed_name));
  EXPECT_EQ((*child(seed_name))["metadata"]["ownerReferences"][0]["uid"], owner["metadata"]["uid"]);

  auto again = applier.seed(
      owner, {kube::resources::configMaps(), config_map("other"), "seed", std::nullopt, false},
      source);
  ASSERT_TRUE(again.ok()) << again.error().status().message();
  EXPECT_TRUE(again->applied.empty());
  EXPECT_EQ((*child(seed_name))["data"]["value"], "seed") << "a seed is never rewritten";

  runtime::OwnedSet set;
  set.children.push_back(
      {kube::resources::configMaps(), config_map("rendered"), "seed", std::nullopt, false});
  auto unforced = applier.apply(owner, set);
  ASSERT_FALSE(unforced.ok()) << "the create's operation owns .data: an unforced apply conflicts";
  EXPECT_NE(unforced.error().status().message().find("onflict"), std::string::npos)
      << unforced.error().status().message();
  set.children.front().force = true;
  auto forced = applier.apply(owner, set);
  ASSERT_TRUE(forced.ok()) << forced.error().status().message();
  EXPECT_EQ((*child(seed_name))["data"]["value"], "rendered");
}

}  // namespace
}  // namespace kvc::it
