// The ModelDeployment corpus: what each role renders (policy::renderModelDeployment) and what
// validating admission decides (policy::admitModelDeployment), one YAML input per case under
// test/golden/model-deployment/<area>/NNN-behaviour.yaml, compared with its .golden next to it.
// KVC_UPDATE_GOLDEN=1 rewrites the goldens; a golden without an input fails the run, and so does
// an input key the area's schema does not know.
//
// render and admission read the cluster from the injection corpus (inject/clusters/<name>.yaml),
// so a case attaches to the very Bindings, pools and backends the Pod injection goldens resolve.
// status takes its facts as written in the case.
//
// render
//   modelDeployment: a whole ModelDeployment (api::modelDeploymentFromJson)
//   cluster:         inject/clusters/<name>.yaml (default: default). spec.kvCache.poolRef is
//                    resolved there with policy::resolveBinding, as the controller does; a
//                    refusal passes no Binding (no connector). Its gpustack-settings ConfigMap
//                    gives the Settings
//   settings:        overrides {dtypeOwned, imagePullPolicy, imagePullSecrets, tcpTwReuse}
//   golden:          "# engine" and "# binding" comment lines (what was resolved, or why not),
//                    then each Deployment as a YAML document headed by a comment naming the role,
//                    its kind, attached or not, managed or unmanaged, and its warnings; or
//                    "# error" and the status
//
// admission
//   operation:       CREATE|UPDATE (default CREATE)
//   modelDeployment: the object; old: the stored one (UPDATE)
//   dtypeOwned:      the Setting model-deployment-kv-cache-dtype-owned (default true)
//   tcpTwReuse:      the Setting model-deployment-tcp-tw-reuse (default false)
//   cluster:         inject/clusters/<name>.yaml: policy::lookUpAttachment reads the Binding's
//                    pool and backend from it (absent: not looked up)
//   namespaceLabels: the labels of the deployment's namespace, whose
//                    pod-security.kubernetes.io/enforce level the roles' Pods are judged against
//                    (absent: not looked up, no Pod Security check)
//   golden:          the verdict (verdict.h)
//
// status  (policy::modelDeploymentStatus, modelDeploymentEvents, holdsBinding, setBindingUsedBy)
//   modelDeployment: a whole ModelDeployment: metadata (generation, deletionTimestamp), spec, and
//                    the status as last written (conditions with their lastTransitionTime,
//                    phase, roles[])
//   binding:         the KVCachePoolBinding spec.kvCache.poolRef names (api::bindingFromJson),
//                    its status included; absent or null: not found
//   refusal:         {reason: a RefusalReason name, message}: why resolveBinding gave no
//                    connector. Default: BindingTerminating for a deleting Binding, else none
//   resolution:      overrides of the Resolution the roles were rendered against, used when the
//                    Binding is found and there is no refusal: {pool (default: its
//                    spec.poolRef), backend (mooncake-dram), masterAddress
//                    (mooncake-dram-leader.gpustack-system.svc:50051; "" = an unreached pool),
//                    protocol (tcp)}
//   renderError:     renderModelDeployment's error message (nothing rendered this pass)
//   roles:           [{name, renderedHash (default "hash-<name>"; none with renderError),
//                      attached (default: what the renderer does — a Resolution with an address
//                      and no roles[].command), deployment}]. `deployment` is the live
//                    Deployment as Kubernetes JSON, only what is read (metadata.generation,
//                    spec.replicas, the template's pod-spec-hash annotation, status); a missing
//                    spec.replicas is the role's roles[].replicas and a missing spec.template
//                    carries renderedHash. A spec role not listed, or listed without
//                    deployment: its Deployment does not exist
//   podsLeft:        Pods of the roles still present (default 0)
//   endpoint:        the address passed as status.endpoint (default none)
//   generation:      default metadata.generation;  now: default 2025-06-01T12:00:00Z
//   golden:          {"status": modelDeploymentStatusToJson(...), "events": [{type, reason,
//                    message}], "holdsBinding": bool, "bindingUsedBy": the Binding's
//                    status.usedBy after setBindingUsedBy (only with a Binding)}
//
// plan  (policy::planModelDeployment, or policy::planModelDeploymentTeardown for a deployment
//        with a deletionTimestamp: one pass decided, STYLE.md §15)
//   modelDeployment: a whole ModelDeployment as cached (metadata, spec, the status as last
//                    written)
//   cluster:         inject/clusters/<name>.yaml (default: default): the Binding spec.kvCache
//                    names, and (live deployments) what resolveBinding answers there, as the
//                    controller observes them through its caches
//   settings:        overrides {dtypeOwned} of the cluster's Settings
//   binding:         the Binding as cached (a whole object, its status included), in place of
//                    the cluster's; null: not found. The resolution is still the cluster's
//   roleDeployments: {role: the live Deployment `<md>-<role>`}   (absent: none)
//   serviceExists:   the Service `<md>` is cached (default false)
//   replicas:        [engine Pod]   (absent: not watched, no skew judged)
//   skewReported:    the signature of the skew last reported
//   applied:         {} or {refused: message}   present for the pass's second plan: what the
//                    apply did (refused: a same-named object that is not ours)
//   ownedWorkloads:  [Deployment] carrying its note, podsLeft: n   (deleting only)
//   now:             default 2025-06-01T12:00:00Z
//   golden:          {apply: [{role, deployment, podSpecHash, attached}] | null, service,
//                    deleteInForeground, holdBinding, status, events, skewEvent, skewSignature,
//                    forgetSkew, next}
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "golden.h"
#include "internal/cluster_file.h"
#include "kvc/api/binding.h"
#include "kvc/api/model_deployment.h"
#include "kvc/common/yaml.h"
#include "kvc/policy/admission/model_deployment_admission.h"
#include "kvc/policy/inject/refusal.h"
#include "kvc/policy/inject/resolve.h"
#include "kvc/policy/model_deployment/model_deployment_plan.h"
#include "kvc/policy/model_deployment/model_deployment_render.h"
#include "kvc/policy/model_deployment/model_deployment_status.h"
#include "kvc/policy/store/store_member.h"
#include "kvc/policy/store/store_workload.h"
#include "verdict.h"

namespace kvc::policy {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = KVC_GOLDEN_MODEL_DEPLOYMENT_DIR;
const fs::path kClusters = KVC_GOLDEN_INJECT_DIR "/clusters";

struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void onlyKeys(const Json& input, const std::set<std::string>& keys) {
  for (auto it = input.begin(); it != input.end(); ++it) {
    if (!keys.contains(it.key())) {
      throw BadInput(it.key() + " is not part of the schema (see model_deployment_golden_test.cc)");
    }
  }
}

api::ModelDeployment deploymentAt(const Json& input, const std::string& key) {
  auto decoded = api::modelDeploymentFromJson(input.value(key, Json::object()));
  if (!decoded.ok()) {
    throw BadInput(key + ": " + decoded.status().message());
  }
  return std::move(decoded).value();
}

cmd::ClusterFile clusterOf(const std::string& name) {
  auto cluster = cmd::loadClusterFile((kClusters / (name + ".yaml")).string());
  if (!cluster.ok()) {
    throw BadInput("cluster: " + cluster.status().message());
  }
  return std::move(cluster).value();
}

// ---------------------------------------------------------------------------------------------
// render

std::string resolutionLine(const Resolution& r) {
  return "# binding: " + r.binding + " -> pool " + r.pool + ", backend " + r.backend + ", master " +
         r.master_address + ", protocol " + r.protocol + ", domain " + r.domain.name + " (" +
         r.domain.dtype + ", block size " + std::to_string(r.domain.block_size) + "), tenant " +
         (r.tenant_injected ? "injected" : "not injected") + "\n";
}

std::string renderCase(const Json& input) {
  onlyKeys(input, {"modelDeployment", "cluster", "settings"});
  const api::ModelDeployment md = deploymentAt(input, "modelDeployment");
  cmd::ClusterFile cluster = clusterOf(input.value("cluster", std::string("default")));
  ModelDeploymentInputs inputs;
  inputs.settings = cluster.settings;
  const Json settings = input.value("settings", Json::object());
  onlyKeys(settings, {"dtypeOwned", "imagePullPolicy", "imagePullSecrets", "tcpTwReuse"});
  inputs.settings.kv_cache_dtype_owned =
      settings.value("dtypeOwned", inputs.settings.kv_cache_dtype_owned);
  inputs.settings.image_pull_policy =
      settings.value("imagePullPolicy", inputs.settings.image_pull_policy);
  inputs.settings.image_pull_secrets =
      settings.value("imagePullSecrets", inputs.settings.image_pull_secrets);
  inputs.settings.tcp_tw_reuse = settings.value("tcpTwReuse", inputs.settings.tcp_tw_reuse);

  auto manufacturer = modelDeploymentManufacturer(md);
  if (!manufacturer.ok()) {
    return "# error\n" + manufacturer.status().toString() + "\n";
  }
  inputs.manufacturer = *manufacturer;
  auto engine = modelDeploymentEngine(md, inputs.manufacturer);
  if (!engine.ok()) {
    return "# error\n" + engine.status().toString() + "\n";
  }
  std::string out = "# engine: " + std::string(engineRecordName(*engine)) + "\n";
  if (md.spec.kv_cache) {
    ResolveOutcome resolved = resolveBinding(md.metadata.namespace_name, md.spec.kv_cache->pool_ref,
                                             *engine, cluster.snapshot);
    if (auto* resolution = std::get_if<Resolution>(&resolved)) {
      out += resolutionLine(*resolution);
      inputs.binding = *resolution;
    } else if (auto* refusal = std::get_if<Refusal>(&resolved)) {
      out += "# binding: not resolved (" + std::string(refusalReasonName(refusal->reason)) +
             "): " + refusal->message + "\n";
    } else {
      throw BadInput("cluster: " + std::get<Status>(resolved).message());
    }
  } else {
    out += "# binding: none (no spec.kvCache)\n";
  }

  auto rendered = renderModelDeployment(md, inputs);
  if (!rendered.ok()) {
    return out + "# error\n" + rendered.status().toString() + "\n";
  }
  for (const RenderedRole& role : *rendered) {
    // The hash stamped on a template is the hash of that template.
    const Json& tmpl = role.deployment["spec"]["template"];
    EXPECT_EQ(tmpl["metadata"]["annotations"][std::string(kPodSpecHashAnnotation)],
              podSpecHash(tmpl));
    out += "---\n# Deployment " + role.deployment["metadata"]["name"].get<std::string>() +
           " (role " + role.name + ", kind " + role.kind + ", " +
           (role.attached ? "attached" : "not attached") + ", " +
           (role.unmanaged ? "unmanaged" : "managed") + ")\n";
    for (const std::string& warning : role.warnings) {
      out += "# warning: " + warning + "\n";
    }
    out += toYaml(role.deployment);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// admission

std::string admissionCase(const Json& input) {
  onlyKeys(input, {"operation", "modelDeployment", "old", "dtypeOwned", "tcpTwReuse", "cluster",
                   "namespaceLabels"});
  ModelDeploymentAdmission request;
  const std::string operation = input.value("operation", std::string("CREATE"));
  if (operation != "CREATE" && operation != "UPDATE") {
    throw BadInput("operation: \"" + operation + "\" is not one of CREATE|UPDATE");
  }
  request.operation =
      operation == "CREATE" ? AdmissionOperation::Create : AdmissionOperation::Update;
  request.deployment = deploymentAt(input, "modelDeployment");
  if (input.contains("old")) {
    request.old = deploymentAt(input, "old");
  }
  request.dtype_owned = input.value("dtypeOwned", true);
  request.tcp_tw_reuse = input.value("tcpTwReuse", false);
  if (input.contains("namespaceLabels")) {
    request.namespace_labels = input["namespaceLabels"].get<std::map<std::string, std::string>>();
  }
  if (input.contains("cluster") && request.deployment.spec.kv_cache) {
    cmd::ClusterFile cluster = clusterOf(input["cluster"].get<std::string>());
    auto found = lookUpAttachment(cluster.snapshot, request.deployment.metadata.namespace_name,
                                  request.deployment.spec.kv_cache->pool_ref);
    if (!found.ok()) {
      throw BadInput("cluster: " + found.status().message());
    }
    request.attachment = std::move(found).value();
  }
  return golden::verdictJson(admitModelDeployment(request), api::kKindModelDeployment,
                             request.deployment.metadata.name)
             .dump(2) +
         "\n";
}

// ---------------------------------------------------------------------------------------------
// status

RefusalReason refusalReasonNamed(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(RefusalReason::EngineMismatch); ++i) {
    const auto reason = static_cast<RefusalReason>(i);
    if (refusalReasonName(reason) == name) {
      return reason;
    }
  }
  throw BadInput("refusal.reason: \"" + name + "\" is not a RefusalReason");
}

std::string statusCase(const Json& input) {
  onlyKeys(input, {"modelDeployment", "binding", "refusal", "resolution", "renderError", "roles",
                   "podsLeft", "endpoint", "generation", "now"});
  ModelDeploymentFacts facts;
  facts.deployment = deploymentAt(input, "modelDeployment");
  const api::ModelDeployment& md = facts.deployment;
  if (input.contains("binding") && !input["binding"].is_null()) {
    auto binding = api::bindingFromJson(input["binding"]);
    if (!binding.ok()) {
      throw BadInput("binding: " + binding.status().message());
    }
    facts.binding = std::move(binding).value();
  }
  if (input.contains("refusal")) {
    const Json& refusal = input["refusal"];
    onlyKeys(refusal, {"reason", "message"});
    facts.refusal = Refusal{refusalReasonNamed(refusal.value("reason", std::string())),
                            refusal.value("message", std::string())};
  } else if (facts.binding && facts.binding->metadata.deleting) {
    facts.refusal =
        Refusal{RefusalReason::BindingTerminating, "KVCachePoolBinding is being deleted"};
  }
  if (facts.binding && !facts.refusal) {
    const Json overrides = input.value("resolution", Json::object());
    onlyKeys(overrides, {"pool", "backend", "masterAddress", "protocol"});
    Resolution r;
    r.binding = facts.binding->metadata.name;
    r.pool = overrides.value("pool", facts.binding->spec.pool_ref);
    r.backend = overrides.value("backend", std::string("mooncake-dram"));
    r.master_address = overrides.value(
        "masterAddress", std::string("mooncake-dram-leader.gpustack-system.svc:50051"));
    r.protocol = overrides.value("protocol", std::string("tcp"));
    r.domain = facts.binding->spec.domain;
    r.tenant_injected = true;
    facts.resolution = r;
  } else if (input.contains("resolution")) {
    throw BadInput("resolution: only used with a Binding found and no refusal");
  }
  if (input.contains("renderError")) {
    facts.render_error = input["renderError"].get<std::string>();
  }
  const bool reachable =
      md.spec.kv_cache && facts.resolution && !facts.resolution->master_address.empty();
  std::map<std::string, Json> listed;
  for (const Json& role : input.value("roles", Json::array())) {
    onlyKeys(role, {"name", "renderedHash", "attached", "deployment"});
    listed[role.value("name", std::string())] = role;
  }
  for (const api::ModelDeploymentRole& role : md.spec.roles) {
    const Json given = listed.count(role.name) ? listed[role.name] : Json::object();
    listed.erase(role.name);
    ModelDeploymentRoleFacts facts_of;
    facts_of.name = role.name;
    if (!facts.render_error) {
      facts_of.rendered_hash = given.value("renderedHash", "hash-" + role.name);
    }
    facts_of.attached =
        given.value("attached", facts.render_error ? false : reachable && !role.command);
    if (given.contains("deployment")) {
      Json deployment = given["deployment"];
      if (!deployment["spec"].contains("replicas")) {
        deployment["spec"]["replicas"] = role.replicas;
      }
      if (!deployment["spec"].contains("template")) {
        deployment["spec"]["template"]["metadata"]["annotations"]
                  [std::string(kPodSpecHashAnnotation)] =
                      given.value("renderedHash", "hash-" + role.name);
      }
      facts_of.deployment = observeRoleDeployment(deployment);
    }
    facts.roles.push_back(std::move(facts_of));
  }
  if (!listed.empty()) {
    throw BadInput("roles: " + listed.begin()->first + " is not a role of the spec");
  }
  facts.pods_left = input.value("podsLeft", std::int64_t{0});
  facts.endpoint = input.value("endpoint", std::string());
  const std::int64_t generation = input.value("generation", md.metadata.generation);
  const std::string now = input.value("now", std::string("2025-06-01T12:00:00Z"));

  const api::ModelDeployment::Status status = modelDeploymentStatus(facts, generation, now);
  Json out = Json::object();
  out["status"] = api::modelDeploymentStatusToJson(status);
  Json events = Json::array();
  for (const ModelDeploymentEvent& event : modelDeploymentEvents(md.status, status)) {
    events.push_back({{"type", event.type}, {"reason", event.reason}, {"message", event.message}});
  }
  out["events"] = std::move(events);
  const bool hold = holdsBinding(facts);
  out["holdsBinding"] = hold;
  if (facts.binding) {
    std::vector<api::ObjectReference> used_by = facts.binding->status.used_by;
    setBindingUsedBy(used_by, md.metadata.name, hold);
    out["bindingUsedBy"] = api::objectReferencesToJson(used_by);
  }
  return out.dump(2) + "\n";
}

// ---------------------------------------------------------------------------------------------
// plan

std::string nextName(ModelDeploymentNext next) {
  switch (next) {
    case ModelDeploymentNext::Done:
      return "Done";
    case ModelDeploymentNext::Resync:
      return "Resync";
    case ModelDeploymentNext::DeletingPoll:
      return "DeletingPoll";
  }
  return "?";
}

std::vector<Json> objects(const Json& input, const std::string& key) {
  std::vector<Json> out;
  for (const Json& object : input.value(key, Json::array())) {
    out.push_back(object);
  }
  return out;
}

// What the controller observes: the Binding spec.kvCache names and resolveBinding's answer from
// the cluster (as the caches hold it), and the rest as written in the case.
ModelDeploymentObservation planObservation(const Json& input) {
  ModelDeploymentObservation seen;
  seen.now = input.value("now", std::string("2025-06-01T12:00:00Z"));
  seen.deployment = deploymentAt(input, "modelDeployment");
  const api::ModelDeployment& md = seen.deployment;
  cmd::ClusterFile cluster = clusterOf(input.value("cluster", std::string("default")));
  seen.settings = cluster.settings;
  const Json settings = input.value("settings", Json::object());
  onlyKeys(settings, {"dtypeOwned"});
  seen.settings.kv_cache_dtype_owned =
      settings.value("dtypeOwned", seen.settings.kv_cache_dtype_owned);
  const std::string& namespace_name = md.metadata.namespace_name;
  if (md.spec.kv_cache) {
    auto binding = cluster.snapshot.binding(namespace_name, md.spec.kv_cache->pool_ref);
    if (!binding.ok()) {
      throw BadInput("cluster: " + binding.status().message());
    }
    seen.binding = *binding;
    if (input.contains("binding")) {
      seen.binding.reset();
      if (!input["binding"].is_null()) {
        auto decoded = api::bindingFromJson(input["binding"]);
        if (!decoded.ok()) {
          throw BadInput("binding: " + decoded.status().message());
        }
        seen.binding = std::move(decoded).value();
      }
    }
  }
  auto runtime = modelDeploymentRuntime(md);
  if (runtime.ok() && seen.binding && !md.metadata.deleting) {
    ResolveOutcome resolved = resolveBinding(namespace_name, md.spec.kv_cache->pool_ref,
                                             runtime->engine, cluster.snapshot);
    if (auto* resolution = std::get_if<Resolution>(&resolved)) {
      seen.resolution = *resolution;
    } else if (auto* refusal = std::get_if<Refusal>(&resolved)) {
      seen.refusal = *refusal;
    } else {
      throw BadInput("cluster: " + std::get<Status>(resolved).message());
    }
  }
  const Json roles = input.value("roleDeployments", Json::object());
  for (auto it = roles.begin(); it != roles.end(); ++it) {
    seen.role_deployments[it.key()] = it.value();
  }
  seen.service_exists = input.value("serviceExists", false);
  if (input.contains("replicas")) {
    seen.replicas = objects(input, "replicas");
  }
  if (input.contains("skewReported")) {
    seen.skew_reported = input["skewReported"].get<std::string>();
  }
  if (input.contains("applied")) {
    onlyKeys(input["applied"], {"refused"});
    seen.applied = WorkloadApply{};
    if (input["applied"].contains("refused")) {
      seen.applied->refused = input["applied"]["refused"].get<std::string>();
    }
  }
  seen.owned_workloads = objects(input, "ownedWorkloads");
  seen.pods_left = input.value("podsLeft", std::int64_t{0});
  return seen;
}

std::string planCase(const Json& input) {
  onlyKeys(input,
           {"modelDeployment", "cluster", "settings", "binding", "roleDeployments", "serviceExists",
            "replicas", "skewReported", "applied", "ownedWorkloads", "podsLeft", "now"});
  const ModelDeploymentObservation seen = planObservation(input);
  const bool deleting = seen.deployment.metadata.deleting;
  if (!deleting && (input.contains("ownedWorkloads") || input.contains("podsLeft"))) {
    throw BadInput("ownedWorkloads, podsLeft: read only while deleting");
  }
  const ModelDeploymentPlan plan =
      deleting ? planModelDeploymentTeardown(seen) : planModelDeployment(seen);
  Json out = Json::object();
  Json applied = Json();
  if (plan.apply) {
    applied = Json::array();
    for (const RenderedRole& role : *plan.apply) {
      applied.push_back(
          {{"role", role.name},
           {"deployment", role.deployment["metadata"]["name"]},
           {"podSpecHash", role.deployment["spec"]["template"]["metadata"]["annotations"]
                                          [std::string(kPodSpecHashAnnotation)]},
           {"attached", role.attached}});
    }
  }
  out["apply"] = applied;
  out["service"] = plan.service ? (*plan.service)["metadata"]["name"] : Json();
  Json deletes = Json::array();
  for (const Json& child : plan.delete_in_foreground) {
    deletes.push_back(child["metadata"]["name"]);
  }
  out["deleteInForeground"] = deletes;
  out["holdBinding"] = plan.hold_binding ? Json(*plan.hold_binding) : Json();
  out["status"] = plan.status ? api::modelDeploymentStatusToJson(plan.status->status) : Json();
  Json events = Json::array();
  if (plan.status) {
    for (const ModelDeploymentEvent& event : plan.status->events) {
      events.push_back(
          {{"type", event.type}, {"reason", event.reason}, {"message", event.message}});
    }
  }
  out["events"] = events;
  out["skewEvent"] = plan.skew_event ? Json{{"type", plan.skew_event->type},
                                            {"reason", plan.skew_event->reason},
                                            {"message", plan.skew_event->message}}
                                     : Json();
  out["skewSignature"] = plan.skew_signature ? Json(*plan.skew_signature) : Json();
  out["forgetSkew"] = plan.forget_skew;
  out["next"] = plan.applies() ? Json("planned again after the apply") : Json(nextName(plan.next));
  return out.dump(2) + "\n";
}

// ---------------------------------------------------------------------------------------------
// The corpus.

const std::map<std::string, std::function<std::string(const Json&)>>& areas() {
  static const std::map<std::string, std::function<std::string(const Json&)>> kAreas = {
      {"render", renderCase},
      {"admission", admissionCase},
      {"status", statusCase},
      {"plan", planCase}};
  return kAreas;
}

std::vector<std::string> cases() {
  std::vector<std::string> out;
  for (const auto& [area, run] : areas()) {
    if (fs::is_directory(kDir / area)) {
      for (const std::string& stem : golden::discover(kDir / area, ".yaml")) {
        out.push_back(area + "/" + stem);
      }
    }
  }
  return out;
}

class ModelDeploymentGolden : public testing::TestWithParam<std::string> {};

TEST_P(ModelDeploymentGolden, MatchesExpected) {
  const std::string& name = GetParam();
  const std::string area = name.substr(0, name.find('/'));
  const std::string stem = name.substr(name.find('/') + 1);
  const fs::path input = kDir / area / (stem + ".yaml");
  auto documents = parseYamlDocuments(golden::readFile(input));
  ASSERT_TRUE(documents.ok()) << documents.status().message();
  ASSERT_EQ(documents->size(), 1u) << input << " must hold one YAML mapping";
  std::string actual;
  try {
    actual = areas().at(area)(documents->front().value);
  } catch (const BadInput& error) {
    FAIL() << input.string() << ": " << error.what();
  }
  EXPECT_EQ(golden::compare(kDir / area / (stem + ".golden"), actual), "");
}

INSTANTIATE_TEST_SUITE_P(Cases, ModelDeploymentGolden, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<std::string>& param) {
                           std::string name;
                           for (char c : param.param) {
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return name;
                         });

TEST(ModelDeploymentGoldenCorpus, HasNoStaleExpectedFiles) {
  for (const auto& [area, run] : areas()) {
    ASSERT_TRUE(fs::is_directory(kDir / area)) << "model-deployment/" << area << " is missing";
    const std::vector<std::string> inputs = golden::discover(kDir / area, ".yaml");
    for (const std::string& stem : golden::discover(kDir / area, ".golden")) {
      EXPECT_TRUE(std::binary_search(inputs.begin(), inputs.end(), stem))
          << "model-deployment/" << area << "/" << stem << ".golden has no " << stem << ".yaml";
    }
  }
}

TEST(ModelDeploymentGoldenCorpus, HasOnlyKnownAreas) {
  for (const auto& entry : fs::directory_iterator(kDir)) {
    EXPECT_TRUE(areas().count(entry.path().filename().string()) > 0)
        << entry.path() << " is not an area of model_deployment_golden_test.cc";
  }
}

}  // namespace
}  // namespace kvc::policy
