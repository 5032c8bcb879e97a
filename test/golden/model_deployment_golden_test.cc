// The ModelDeployment corpus: what each role renders (policy::renderModelDeployment) and what
// validating admission decides (policy::admitModelDeployment), one YAML input per case under
// test/golden/model-deployment/<area>/NNN-behaviour.yaml, compared with its .golden next to it.
// KVC_UPDATE_GOLDEN=1 rewrites the goldens; a golden without an input fails the run, and so does
// an input key the area's schema does not know.
//
// Both areas read the cluster from the injection corpus (inject/clusters/<name>.yaml), so a case
// attaches to the very Bindings, pools and backends the Pod injection goldens resolve.
//
// render
//   modelDeployment: a whole ModelDeployment (api::modelDeploymentFromJson)
//   cluster:         inject/clusters/<name>.yaml (default: default). spec.kvCache.poolRef is
//                    resolved there with policy::resolveBinding, as the controller does; a
//                    refusal passes no Binding (no connector). Its gpustack-settings ConfigMap
//                    gives the Settings
//   manufacturer:    "" (default) or ascend
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
//   manufacturer:    as in render
//   cluster:         inject/clusters/<name>.yaml: policy::lookUpAttachment reads the Binding's
//                    pool and backend from it (absent: not looked up)
//   golden:          the verdict (verdict.h)
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
#include "kvc/api/model_deployment.h"
#include "kvc/common/yaml.h"
#include "kvc/policy/model_deployment_admission.h"
#include "kvc/policy/model_deployment_render.h"
#include "kvc/policy/refusal.h"
#include "kvc/policy/resolve.h"
#include "kvc/policy/store_workload.h"
#include "kvc/policy/store_member.h"
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
  return "# binding: " + r.binding + " -> pool " + r.pool + ", backend " + r.backend +
         ", master " + r.master_address + ", protocol " + r.protocol + ", domain " +
         r.domain.name + " (" + r.domain.dtype + ", block size " +
         std::to_string(r.domain.block_size) + "), tenant " +
         (r.tenant_injected ? "injected" : "not injected") + "\n";
}

std::string renderCase(const Json& input) {
  onlyKeys(input, {"modelDeployment", "cluster", "manufacturer", "settings"});
  const api::ModelDeployment md = deploymentAt(input, "modelDeployment");
  cmd::ClusterFile cluster = clusterOf(input.value("cluster", std::string("default")));
  ModelDeploymentInputs inputs;
  inputs.settings = cluster.settings;
  inputs.manufacturer = input.value("manufacturer", std::string());
  const Json settings = input.value("settings", Json::object());
  onlyKeys(settings, {"dtypeOwned", "imagePullPolicy", "imagePullSecrets", "tcpTwReuse"});
  inputs.settings.kv_cache_dtype_owned =
      settings.value("dtypeOwned", inputs.settings.kv_cache_dtype_owned);
  inputs.settings.image_pull_policy =
      settings.value("imagePullPolicy", inputs.settings.image_pull_policy);
  inputs.settings.image_pull_secrets =
      settings.value("imagePullSecrets", inputs.settings.image_pull_secrets);
  inputs.settings.tcp_tw_reuse = settings.value("tcpTwReuse", inputs.settings.tcp_tw_reuse);

  auto engine = modelDeploymentEngine(md, inputs.manufacturer);
  if (!engine.ok()) {
    return "# error\n" + engine.status().toString() + "\n";
  }
  std::string out = "# engine: " + std::string(engineRecordName(*engine)) + "\n";
  if (md.spec.kv_cache) {
    ResolveOutcome resolved = resolveBinding(md.metadata.namespace_name,
                                             md.spec.kv_cache->pool_ref, *engine, cluster.snapshot);
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
  onlyKeys(input, {"operation", "modelDeployment", "old", "dtypeOwned", "manufacturer", "cluster"});
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
  request.manufacturer = input.value("manufacturer", std::string());
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
// The corpus.

const std::map<std::string, std::function<std::string(const Json&)>>& areas() {
  static const std::map<std::string, std::function<std::string(const Json&)>> kAreas = {
      {"render", renderCase}, {"admission", admissionCase}};
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
