// The managed store corpus: what a managed KVCacheBackend renders (policy::renderStore — election
// RBAC, leader Service and Deployment, one member DaemonSet per group), one YAML input per
// distinctive spec under test/golden/store/NNN-behaviour.yaml, compared with its .golden next to
// it. KVC_UPDATE_GOLDEN=1 rewrites the goldens; a golden without an input fails the run, and so
// does an input key the schema does not know.
//
//   backend:        a whole KVCacheBackend (api::backendFromJson), managed
//   namespace:      where the store runs (default gpustack-system)
//   settingsImage:  the Setting kv-cache-backend-image (default: the Setting's default; "" for a
//                   cleared Setting)
//   liveLeader:     the leader Deployment as the cache holds it (default: absent), for the
//                   two-step rise
//   golden:         each rendered object as a YAML document headed by a comment naming the role
//                   and group the ownership note will carry; or "# error" and the status
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "golden.h"
#include "kvc/api/backend.h"
#include "kvc/api/settings.h"
#include "kvc/common/yaml.h"
#include "kvc/policy/store/store_member.h"
#include "kvc/policy/store/store_render.h"

namespace kvc::policy {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = KVC_GOLDEN_STORE_DIR;

std::string render(const Json& input) {
  static const std::set<std::string> k_keys = {"backend", "namespace", "settingsImage",
                                               "liveLeader"};
  for (auto it = input.begin(); it != input.end(); ++it) {
    if (!k_keys.contains(it.key())) {
      ADD_FAILURE() << "unknown input key " << it.key();
    }
  }
  auto backend = api::backendFromJson(input.value("backend", Json::object()));
  if (!backend.ok()) {
    return "# error\n" + backend.status().toString() + "\n";
  }
  StoreInputs inputs{input.value("namespace", std::string("gpustack-system")),
                     input.value("settingsImage", std::string(api::kDefaultBackendImage))};
  auto rendered = renderStore(*backend, inputs, input.value("liveLeader", Json()));
  if (!rendered.ok()) {
    return "# error\n" + rendered.status().toString() + "\n";
  }
  std::string out;
  for (const RenderedObject& r : *rendered) {
    // The hash stamped on a member template is the hash of that template.
    if (r.object["kind"] == "DaemonSet") {
      const Json& tmpl = r.object["spec"]["template"];
      EXPECT_EQ(tmpl["metadata"]["annotations"][std::string(kPodSpecHashAnnotation)],
                podSpecHash(tmpl));
    }
    out += "---\n# " + r.object["kind"].get<std::string>() + " " +
           r.object["metadata"]["name"].get<std::string>() + " (role " + r.role +
           (r.group ? ", group " + std::to_string(*r.group) : std::string()) + ")\n";
    out += toYaml(r.object);
    if (!out.empty() && out.back() != '\n') {
      out += "\n";
    }
  }
  return out;
}

class StoreGolden : public testing::TestWithParam<std::string> {};

TEST_P(StoreGolden, MatchesExpected) {
  const std::string stem = GetParam();
  auto documents = parseYamlDocuments(golden::readFile(kDir / (stem + ".yaml")));
  ASSERT_TRUE(documents.ok()) << documents.status().message();
  ASSERT_EQ(documents->size(), 1u);
  EXPECT_EQ(golden::compare(kDir / (stem + ".golden"), render(documents->front().value)), "");
}

INSTANTIATE_TEST_SUITE_P(Cases, StoreGolden, testing::ValuesIn(golden::discover(kDir, ".yaml")),
                         [](const testing::TestParamInfo<std::string>& param) {
                           std::string name;
                           for (char c : param.param) {
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return name;
                         });

TEST(StoreGoldenCorpus, EveryGoldenHasAnInput) {
  const std::vector<std::string> inputs = golden::discover(kDir, ".yaml");
  for (const std::string& stem : golden::discover(kDir, ".golden")) {
    EXPECT_NE(std::find(inputs.begin(), inputs.end(), stem), inputs.end())
        << "store/" << stem << ".golden has no " << stem << ".yaml";
  }
}

}  // namespace
}  // namespace kvc::policy
