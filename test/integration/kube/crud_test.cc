// The kube client against the real API server: discovery, CRUD, typed errors, patches,
// server-side apply conflicts, the status subresource, watch, credentials and RBAC, finalizers
// and Events — on our CRDs wherever the behaviour is ours to rely on.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "harness.h"
#include "kvc/kube/config.h"
#include "kvc/kube/discovery.h"
#include "kvc/kube/object.h"
#include "kvc/runtime/events.h"
#include "kvc/runtime/finalizer.h"

namespace kvc::it {
namespace {

namespace fs = std::filesystem;
using kube::Api;
using kube::ErrorReason;

Json binding(const std::string& name, const std::string& namespace_name,
             const std::string& ceiling = "1Gi") {
  return Json{
      {"apiVersion", "worker.gpustack.ai/v1"},
      {"kind", "KVCachePoolBinding"},
      {"metadata", {{"name", name}, {"namespace", namespace_name}, {"labels", {{"tier", "gold"}}}}},
      {"spec",
       {{"poolRef", {{"name", "shared-dram"}}},
        {"quota", {{"ceiling", ceiling}}},
        {"domain", {{"blockSize", 16}, {"dtype", "fp8"}}}}}};
}

bool isGone(const Api& api, const std::string& name) {
  auto r = api.get(name);
  return !r.ok() && r.error().isNotFound();
}

Json pool(const std::string& name) {
  return Json{
      {"apiVersion", "worker.gpustack.ai/v1"},
      {"kind", "KVCachePool"},
      {"metadata", {{"name", name}}},
      {"spec", {{"backends", Json::array({"mooncake-dram"})}, {"quota", {{"total", "8Gi"}}}}}};
}

class CrudTest : public ::testing::Test {
protected:
  CrudTest()
      : env_(ClusterEnv::fromEnvironment()),
        client_(adminClient(env_)),
        ns_(client_, "crud"),
        bindings_(client_, kube::resources::kvCachePoolBindings(), ns_.name()) {}

  ClusterEnv env_;
  kube::ClientPtr client_;
  TestNamespace ns_;
  Api bindings_;
};

TEST_F(CrudTest, DiscoveryAgreesWithTheStaticTable) {
  std::set<std::pair<std::string, std::string>> group_versions;
  for (const kube::ResourceType& r : kube::resources::all()) {
    group_versions.insert({r.group, r.version});
  }
  for (const auto& [group, version] : group_versions) {
    auto served = kube::discoverResources(*client_, group, version);
    ASSERT_TRUE(served.ok()) << group << "/" << version << ": " << served.status().toString();
    for (const kube::ResourceType& r : kube::resources::all()) {
      if (r.group != group || r.version != version) {
        continue;
      }
      bool found = false;
      for (const kube::ResourceType& s : *served) {
        if (s.kind == r.kind) {
          EXPECT_EQ(s, r) << "discovery disagrees about " << r.kind;
          found = true;
        }
      }
      EXPECT_TRUE(found) << r.kind << " is not served in " << r.apiVersion();
    }
  }
}

TEST_F(CrudTest, CreateGetUpdateDeleteWithTypedErrors) {
  auto created = bindings_.create(binding("b1", ns_.name()));
  ASSERT_TRUE(created.ok()) << created.status().toString();
  EXPECT_EQ(kube::object::generation(*created), 1);
  EXPECT_EQ((*created)["spec"]["domain"]["name"], "default");  // the CRD default applied

  auto again = bindings_.create(binding("b1", ns_.name()));
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.error().isAlreadyExists());
  EXPECT_EQ(again.status().code(), StatusCode::AlreadyExists);

  auto got = bindings_.get("b1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(kube::object::uid(*got), kube::object::uid(*created));

  // Update with the current resourceVersion succeeds and bumps the generation.
  Json changed = *got;
  changed["spec"]["quota"]["ceiling"] = "2Gi";
  auto updated = bindings_.replace("b1", changed);
  ASSERT_TRUE(updated.ok()) << updated.status().toString();
  EXPECT_EQ(kube::object::generation(*updated), 2);

  // The same stale copy again: Conflict.
  auto stale = bindings_.replace("b1", changed);
  ASSERT_FALSE(stale.ok());
  EXPECT_TRUE(stale.error().isConflict());
  EXPECT_EQ(stale.status().code(), StatusCode::Aborted);

  // A precondition on a wrong uid refuses the delete.
  kube::DeleteParams wrong;
  wrong.preconditions = kube::Preconditions{"00000000-0000-0000-0000-000000000000", ""};
  auto refused = bindings_.remove("b1", wrong);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.error().isConflict()) << refused.status().toString();

  kube::DeleteParams right;
  right.preconditions =
      kube::Preconditions{kube::object::uid(*created), kube::object::resourceVersion(*updated)};
  right.propagation_policy = "Background";
  auto deleted = bindings_.remove("b1", right);
  ASSERT_TRUE(deleted.ok()) << deleted.status().toString();
  ASSERT_TRUE(waitFor([&] { return isGone(bindings_, "b1"); }, std::chrono::seconds(30)));
  // Foreground propagation: the object stays, marked, until the garbage collector is done.
  ASSERT_TRUE(bindings_.create(binding("b2", ns_.name())).ok());
  kube::DeleteParams foreground;
  foreground.propagation_policy = "Foreground";
  auto marked = bindings_.remove("b2", foreground);
  ASSERT_TRUE(marked.ok()) << marked.status().toString();
  EXPECT_TRUE(kube::object::isDeleting(*marked));
  EXPECT_EQ((*marked)["metadata"]["finalizers"], Json::array({"foregroundDeletion"}));
  auto missing = bindings_.get("b1");
  EXPECT_EQ(missing.error().reason(), ErrorReason::NotFound);
  EXPECT_EQ(missing.error().httpStatus(), 404);
}

TEST_F(CrudTest, InvalidObjectsComeBackWithTheirFieldCauses) {
  Json bad = binding("bad", ns_.name(), "-1Gi");
  bad["spec"].erase("poolRef");
  bad["spec"]["domain"]["blockSize"] = 0;
  auto refused = bindings_.create(bad);
  ASSERT_FALSE(refused.ok());
  ASSERT_TRUE(refused.error().isInvalid()) << refused.status().toString();
  EXPECT_EQ(refused.status().code(), StatusCode::InvalidArgument);
  std::set<std::string> fields;
  for (const kube::StatusCause& c : refused.error().causes()) {
    fields.insert(c.field);
  }
  EXPECT_TRUE(fields.count("spec.poolRef") == 1) << refused.status().toString();
  EXPECT_TRUE(fields.count("spec.domain.blockSize") == 1) << refused.status().toString();
  // CEL rules run once the schema is satisfied; their messages are the CRD's.
  auto negative = bindings_.create(binding("negative", ns_.name(), "-1Gi"));
  ASSERT_FALSE(negative.ok());
  ASSERT_TRUE(negative.error().isInvalid());
  ASSERT_FALSE(negative.error().causes().empty());
  EXPECT_EQ(negative.error().causes()[0].field, "spec.quota.ceiling");
  EXPECT_NE(negative.error().causes()[0].message.find("must be greater than zero"),
            std::string::npos)
      << negative.status().toString();
}

TEST_F(CrudTest, ListPagesWithContinueTokensAndSelectors) {
  for (int i = 0; i < 5; ++i) {
    Json b = binding("page-" + std::to_string(i), ns_.name());
    if (i % 2 == 1) {
      b["metadata"]["labels"]["tier"] = "silver";
    }
    ASSERT_TRUE(bindings_.create(b).ok());
  }
  kube::ListParams first;
  first.limit = 2;
  auto page = bindings_.list(first);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->items.size(), 2U);
  EXPECT_FALSE(page->continue_token.empty());
  ASSERT_TRUE(page->remaining_item_count.has_value());
  EXPECT_EQ(*page->remaining_item_count, 3);
  auto all = bindings_.listAll({}, 2);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->items.size(), 5U);
  kube::ListParams silver;
  silver.label_selector = "tier=silver";
  auto selected = bindings_.list(silver);
  ASSERT_TRUE(selected.ok());
  EXPECT_EQ(selected->items.size(), 2U);
  kube::ListParams by_name;
  by_name.field_selector = "metadata.name=page-3";
  auto named = bindings_.list(by_name);
  ASSERT_TRUE(named.ok()) << named.status().toString();
  ASSERT_EQ(named->items.size(), 1U);
  EXPECT_EQ(kube::object::name(named->items[0]), "page-3");
  // An expired or garbled continue token is a typed error.
  kube::ListParams garbled;
  garbled.continue_token = "bm90LWEtdG9rZW4";
  EXPECT_FALSE(bindings_.list(garbled).ok());
}

TEST_F(CrudTest, MergeAndJsonPatchesWithAGuardingTest) {
  ASSERT_TRUE(bindings_.create(binding("p", ns_.name())).ok());
  auto merged = bindings_.patch(
      "p", kube::MergePatch{Json{{"metadata", {{"labels", {{"patched", "yes"}}}}}}});
  ASSERT_TRUE(merged.ok()) << merged.status().toString();
  EXPECT_EQ((*merged)["metadata"]["labels"]["patched"], "yes");
  EXPECT_EQ((*merged)["metadata"]["labels"]["tier"], "gold");
  auto guarded = bindings_.patch("p", kube::JsonPatch{Json::parse(R"([
          {"op":"test","path":"/spec/quota/ceiling","value":"1Gi"},
          {"op":"replace","path":"/spec/quota/ceiling","value":"3Gi"}])")});
  ASSERT_TRUE(guarded.ok()) << guarded.status().toString();
  EXPECT_EQ((*guarded)["spec"]["quota"]["ceiling"], "3Gi");
  auto failed_test = bindings_.patch("p", kube::JsonPatch{Json::parse(R"([
          {"op":"test","path":"/spec/quota/ceiling","value":"1Gi"},
          {"op":"replace","path":"/spec/quota/ceiling","value":"4Gi"}])")});
  ASSERT_FALSE(failed_test.ok());
  EXPECT_TRUE(failed_test.error().isInvalid()) << failed_test.status().toString();
  // Immutable fields are refused by the CRD's CEL rules, with the message the CRD writes.
  auto immutable =
      bindings_.patch("p", kube::MergePatch{Json{{"spec", {{"domain", {{"blockSize", 32}}}}}}});
  ASSERT_FALSE(immutable.ok());
  EXPECT_TRUE(immutable.error().isInvalid());
  EXPECT_NE(immutable.error().message().find("spec.domain.blockSize is immutable"),
            std::string::npos)
      << immutable.error().message();
}

TEST_F(CrudTest, ServerSideApplyConflictsNameTheOtherManagerAndForceTakesOwnership) {
  Api pools(client_, kube::resources::kvCachePools());
  const std::string name = uniqueName("kvc-it-ssa");
  auto first = pools.apply(pool(name), "manager-a");
  ASSERT_TRUE(first.ok()) << first.status().toString();
  // The same intent from the same manager is a no-op: no new resourceVersion.
  auto same = pools.apply(pool(name), "manager-a");
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(kube::object::resourceVersion(*same), kube::object::resourceVersion(*first));

  Json other = pool(name);
  other["spec"]["quota"]["total"] = "16Gi";
  auto conflict = pools.apply(other, "manager-b");
  ASSERT_FALSE(conflict.ok());
  EXPECT_TRUE(conflict.error().isConflict()) << conflict.status().toString();
  ASSERT_FALSE(conflict.error().causes().empty());
  EXPECT_EQ(conflict.error().causes()[0].reason, "FieldManagerConflict");
  EXPECT_EQ(conflict.error().causes()[0].field, ".spec.quota.total");
  EXPECT_NE(conflict.error().causes()[0].message.find("manager-a"), std::string::npos);

  auto forced = pools.apply(other, "manager-b", /*force=*/true);
  ASSERT_TRUE(forced.ok()) << forced.status().toString();
  EXPECT_EQ((*forced)["spec"]["quota"]["total"], "16Gi");
  bool b_owns_total = false;
  for (const Json& entry : (*forced)["metadata"]["managedFields"]) {
    if (entry["manager"] == "manager-b" &&
        entry["fieldsV1"].dump().find("f:total") != std::string::npos) {
      b_owns_total = true;
    }
  }
  EXPECT_TRUE(b_owns_total) << (*forced)["metadata"]["managedFields"].dump();
  ASSERT_TRUE(pools.remove(name).ok());
}

TEST_F(CrudTest, TheStatusSubresourceIsSeparateFromTheObject) {
  ASSERT_TRUE(bindings_.create(binding("s", ns_.name())).ok());
  auto status = bindings_.patchStatus(
      "s", kube::MergePatch{Json{{"status", {{"phase", "Ready"}, {"effectiveQuota", "1Gi"}}}}});
  ASSERT_TRUE(status.ok()) << status.status().toString();
  EXPECT_EQ((*status)["status"]["phase"], "Ready");
  EXPECT_EQ(kube::object::generation(*status), 1);  // status writes do not bump generation
  // Writes to the main resource ignore status; writes to status ignore spec.
  Json main = *status;
  main["status"]["phase"] = "Error";
  main["spec"]["quota"]["ceiling"] = "5Gi";
  auto replaced = bindings_.replace("s", main);
  ASSERT_TRUE(replaced.ok()) << replaced.status().toString();
  EXPECT_EQ((*replaced)["status"]["phase"], "Ready");
  EXPECT_EQ((*replaced)["spec"]["quota"]["ceiling"], "5Gi");
  Json via_status = *replaced;
  via_status["spec"]["quota"]["ceiling"] = "9Gi";
  via_status["status"]["phase"] = "Provisioning";
  auto status_put = bindings_.replaceStatus("s", via_status);
  ASSERT_TRUE(status_put.ok()) << status_put.status().toString();
  EXPECT_EQ((*status_put)["spec"]["quota"]["ceiling"], "5Gi");
  EXPECT_EQ((*status_put)["status"]["phase"], "Provisioning");
  auto read = bindings_.getStatus("s");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ((*read)["status"]["phase"], "Provisioning");
}

TEST_F(CrudTest, WatchStreamsEventsFromAResourceVersion) {
  auto list = bindings_.list();
  ASSERT_TRUE(list.ok());
  std::mutex seen_mutex;  // the watcher thread appends, this one polls
  std::vector<std::pair<kube::WatchEventType, std::string>> seen;
  auto seen_count = [&] {
    std::lock_guard<std::mutex> guard(seen_mutex);
    return seen.size();
  };
  std::stop_source stop;
  std::thread watcher([&] {
    kube::WatchParams params;
    params.resource_version = list->resource_version;
    params.timeout_seconds = 60;
    auto end = bindings_.watch(
        params,
        [&](kube::WatchEvent&& e) {
          std::lock_guard<std::mutex> guard(seen_mutex);
          if (e.type != kube::WatchEventType::Bookmark) {
            seen.emplace_back(e.type, kube::object::name(e.object));
          }
          return seen.size() < 3;
        },
        stop.get_token());
    EXPECT_TRUE(end.ok()) << end.status().toString();
  });
  // Asserted after the join: a failed ASSERT with the watcher running would terminate instead.
  const bool created = bindings_.create(binding("w", ns_.name())).ok();
  const bool patched =
      created &&
      bindings_.patch("w", kube::MergePatch{Json{{"metadata", {{"labels", {{"x", "1"}}}}}}}).ok();
  const bool removed = patched && bindings_.remove("w").ok();
  if (!removed || !waitFor([seen_count] { return seen_count() >= 3; }, std::chrono::seconds(30))) {
    stop.request_stop();
  }
  watcher.join();
  ASSERT_TRUE(created);
  ASSERT_TRUE(patched);
  ASSERT_TRUE(removed);
  ASSERT_EQ(seen.size(), 3U);
  EXPECT_EQ(seen[0], std::make_pair(kube::WatchEventType::Added, std::string("w")));
  EXPECT_EQ(seen[1], std::make_pair(kube::WatchEventType::Modified, std::string("w")));
  EXPECT_EQ(seen[2], std::make_pair(kube::WatchEventType::Deleted, std::string("w")));
}

// A client certificate for a user RBAC knows nothing about, signed by the cluster's CA.
kube::Config strangerConfig(const ClusterEnv& env, const fs::path& dir) {
  const std::string key = (dir / "stranger.key").string();
  const std::string csr = (dir / "stranger.csr").string();
  const std::string crt = (dir / "stranger.crt").string();
  EXPECT_EQ(run({"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj",
                 "/O=kvc-it/CN=stranger", "-keyout", key, "-out", csr})
                .first,
            0);
  EXPECT_EQ(run({"openssl", "x509", "-req", "-in", csr, "-CA", env.get("KVC_CA_CERT"), "-CAkey",
                 env.get("KVC_CA_KEY"), "-CAcreateserial", "-CAserial", (dir / "ca.srl").string(),
                 "-days", "1", "-out", crt})
                .first,
            0);
  kube::Config config = *kube::loadKubeconfig(env.get("KUBECONFIG"));
  std::ifstream c(crt);
  std::ifstream k(key);
  config.client_cert_pem.assign(std::istreambuf_iterator<char>(c), {});
  config.client_key_pem.assign(std::istreambuf_iterator<char>(k), {});
  return config;
}

TEST_F(CrudTest, CredentialsAndRbacGiveForbiddenAndUnauthorized) {
  const fs::path dir = fs::temp_directory_path() / uniqueName("kvc-it-pki");
  fs::create_directories(dir);
  auto stranger = kube::Client::create(strangerConfig(env_, dir));
  ASSERT_TRUE(stranger.ok());
  auto forbidden = Api(*stranger, kube::resources::kvCachePoolBindings(), ns_.name()).list();
  ASSERT_FALSE(forbidden.ok());
  EXPECT_TRUE(forbidden.error().isForbidden()) << forbidden.status().toString();
  EXPECT_EQ(forbidden.status().code(), StatusCode::PermissionDenied);

  kube::Config bad_token = *kube::loadKubeconfig(env_.get("KUBECONFIG"));
  bad_token.client_cert_pem.clear();
  bad_token.client_key_pem.clear();
  bad_token.bearer_token = "not-a-token";
  auto anonymous =
      Api(*kube::Client::create(bad_token), kube::resources::pods(), ns_.name()).list();
  ASSERT_FALSE(anonymous.ok());
  EXPECT_EQ(anonymous.error().reason(), ErrorReason::Unauthorized);
  EXPECT_EQ(anonymous.status().code(), StatusCode::Unauthenticated);

  // A server certificate the client's CA did not sign is refused (TLS is verified).
  kube::Config wrong_ca = *kube::loadKubeconfig(env_.get("KUBECONFIG"));
  wrong_ca.ca_pem = strangerConfig(env_, dir).client_cert_pem;  // not a CA of the server
  auto unverified = Api(*kube::Client::create(wrong_ca), kube::resources::pods(), "default").list();
  ASSERT_FALSE(unverified.ok());
  EXPECT_EQ(unverified.error().reason(), ErrorReason::Transport) << unverified.status().toString();
  fs::remove_all(dir);
}

TEST_F(CrudTest, AServiceAccountTokenWorksInClusterStyleAndRbacGrantsIt) {
  Api sas(client_, kube::resources::serviceAccounts(), ns_.name());
  ASSERT_TRUE(sas.create(Json{{"apiVersion", "v1"},
                              {"kind", "ServiceAccount"},
                              {"metadata", {{"name", "operator"}}}})
                  .ok());
  auto token = sas.createSubresource("token", "operator",
                                     Json{{"apiVersion", "authentication.k8s.io/v1"},
                                          {"kind", "TokenRequest"},
                                          {"spec", {{"expirationSeconds", 600}}}});
  ASSERT_TRUE(token.ok()) << token.status().toString();
  // Lay the files out as the kubelet would, and read them back as inClusterConfig does.
  const fs::path sa_dir = fs::temp_directory_path() / uniqueName("kvc-it-sa");
  fs::create_directories(sa_dir);
  std::ofstream(sa_dir / "token") << (*token)["status"]["token"].get<std::string>();
  fs::copy_file(env_.get("KVC_CA_CERT"), sa_dir / "ca.crt");
  std::ofstream(sa_dir / "namespace") << ns_.name();
  // Where the API server listens: 127.0.0.1, or the bridge address when real nodes run.
  setenv("KUBERNETES_SERVICE_HOST", env_.get("KVC_APISERVER_HOST").c_str(), 1);
  setenv("KUBERNETES_SERVICE_PORT", env_.get("KVC_APISERVER_PORT").c_str(), 1);
  auto config = kube::inClusterConfig(sa_dir);
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(config.ok()) << config.status().toString();
  EXPECT_EQ(config->default_namespace, ns_.name());
  auto sa_client = *kube::Client::create(*config);
  Api as_sa(sa_client, kube::resources::kvCachePoolBindings(), ns_.name());
  auto before = as_sa.list();
  ASSERT_FALSE(before.ok());
  EXPECT_TRUE(before.error().isForbidden()) << before.status().toString();

  Api roles(client_, kube::resources::roles(), ns_.name());
  Api role_bindings(client_, kube::resources::roleBindings(), ns_.name());
  ASSERT_TRUE(roles
                  .create(Json::parse(R"({"apiVersion":"rbac.authorization.k8s.io/v1",
      "kind":"Role","metadata":{"name":"bindings-reader"},"rules":[{"apiGroups":
      ["worker.gpustack.ai"],"resources":["kvcachepoolbindings"],
      "verbs":["get","list","watch"]}]})"))
                  .ok());
  Json rb = Json::parse(R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding",
      "metadata":{"name":"operator-reads"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io",
      "kind":"Role","name":"bindings-reader"},"subjects":[{"kind":"ServiceAccount",
      "name":"operator"}]})");
  rb["subjects"][0]["namespace"] = ns_.name();
  ASSERT_TRUE(role_bindings.create(rb).ok());
  EXPECT_TRUE(waitFor([&] { return as_sa.list().ok(); }, std::chrono::seconds(30)));
  fs::remove_all(sa_dir);
}

TEST_F(CrudTest, TheFinalizerHelperHoldsTheObjectUntilCleanupAndReleasesIt) {
  ASSERT_TRUE(bindings_.create(binding("f", ns_.name())).ok());
  constexpr const char* kFinalizer = "kvcache.gpustack.ai/test-cleanup";
  int cleaned = 0;
  auto pass = [&]() -> Result<runtime::Action> {
    auto current = bindings_.get("f");
    if (!current.ok()) {
      return current.status();
    }
    return runtime::reconcileWithFinalizer(
        bindings_, *current, kFinalizer,
        [](const Json&) -> Result<runtime::Action> { return runtime::Action::done(); },
        [&](const Json&) -> Result<runtime::Action> {
          ++cleaned;
          return runtime::Action::done();
        });
  };
  ASSERT_TRUE(pass().ok());  // adds the finalizer (test-for-null on an absent list)
  auto held = bindings_.get("f");
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE(runtime::hasFinalizer(*held, kFinalizer));
  // Someone else's finalizer is preserved by the guarded patches.
  ASSERT_TRUE(bindings_
                  .patch("f", kube::JsonPatch{Json::parse(R"([{"op":"add",
      "path":"/metadata/finalizers/-","value":"example.com/other"}])")})
                  .ok());
  ASSERT_TRUE(bindings_.remove("f").ok());
  auto deleting = bindings_.get("f");
  ASSERT_TRUE(deleting.ok());
  EXPECT_TRUE(kube::object::isDeleting(*deleting));
  // A patch computed from a stale copy fails its test instead of clobbering the list.
  EXPECT_EQ(runtime::removeFinalizer(bindings_, *held, kFinalizer).code(), StatusCode::Aborted);
  ASSERT_TRUE(pass().ok());  // cleanup, then release
  EXPECT_EQ(cleaned, 1);
  auto after = bindings_.get("f");
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(runtime::hasFinalizer(*after, kFinalizer));
  EXPECT_TRUE(runtime::hasFinalizer(*after, "example.com/other"));
  ASSERT_TRUE(
      bindings_.patch("f", kube::MergePatch{Json{{"metadata", {{"finalizers", nullptr}}}}}).ok());
  EXPECT_TRUE(waitFor([&] { return isGone(bindings_, "f"); }, std::chrono::seconds(30)));
}

TEST_F(CrudTest, EventsAreCreatedAndAggregatedIntoASeries) {
  auto created = bindings_.create(binding("e", ns_.name()));
  ASSERT_TRUE(created.ok());
  runtime::EventRecorderOptions options;
  options.reporting_instance = "kvc-it";
  runtime::EventRecorder recorder(client_, options);
  recorder.start();
  for (int i = 0; i < 3; ++i) {
    recorder.event(*created, runtime::EventType::Warning, "PoolNotFound", "Bind",
                   "KVCachePool shared-dram does not exist; create it or fix spec.poolRef.name");
  }
  recorder.flushForTest();
  recorder.stop();  // flushes the series count
  EXPECT_EQ(recorder.stats().failed, 0U);
  EXPECT_EQ(recorder.stats().created, 1U);
  Api events(client_, kube::resources::events(), ns_.name());
  auto list = events.list();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 1U);
  const Json& e = list->items[0];
  EXPECT_EQ(e["reason"], "PoolNotFound");
  EXPECT_EQ(e["regarding"]["name"], "e");
  EXPECT_EQ(e["regarding"]["kind"], "KVCachePoolBinding");
  EXPECT_EQ(e["series"]["count"], 3);
}

}  // namespace
}  // namespace kvc::it
