// The observe corpus (kvcache status, kvcache diagnose; docs/observability.md): one recorded
// cluster state per case under test/golden/observe/NNN-behaviour.yaml — `objects:`, a list of
// KVCacheBackend, KVCachePool, KVCachePoolBinding, ModelDeployment and Pod objects with their
// status, as the API server returns them — compared with its .golden next to it: the status tree
// (text, then JSON), then diagnose's findings (text, then JSON) and its exit code, then the
// operator's gauges of those objects (policy::objectMetrics, as the exposition lists them).
// KVC_UPDATE_GOLDEN=1 rewrites the goldens; a golden without an input fails the run.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "golden.h"
#include "kvc/common/yaml.h"
#include "kvc/policy/observe/diagnose.h"
#include "kvc/policy/observe/object_metrics.h"
#include "kvc/policy/observe/status_tree.h"

namespace kvc::policy {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = KVC_GOLDEN_OBSERVE_DIR;

std::string metricsText(const ClusterState& state) {
  std::string out;
  for (const MetricFamilySamples& family :
       objectMetrics(state.backends, state.pools, state.bindings)) {
    out += "# TYPE " + family.name + " " + family.type + "\n";
    for (const MetricSeries& series : family.series) {
      out += family.name + "{";
      for (std::size_t i = 0; i < series.labels.size(); ++i) {
        out +=
            (i == 0 ? "" : ",") + series.labels[i].first + "=\"" + series.labels[i].second + "\"";
      }
      out += "} " + Json(series.value).dump() + "\n";
    }
  }
  return out;
}

std::string render(const Json& input) {
  for (auto it = input.begin(); it != input.end(); ++it) {
    if (it.key() != "objects") {
      ADD_FAILURE() << "unknown input key " << it.key();
    }
  }
  const Json objects = input.value("objects", Json::array());
  auto state = clusterStateFromObjects(std::vector<Json>(objects.begin(), objects.end()));
  if (!state.ok()) {
    return "# error\n" + state.status().toString() + "\n";
  }
  const std::vector<Finding> findings = diagnose(*state);
  return "# kvcache status\n" + statusTreeText(*state) + "# kvcache status -o json\n" +
         statusTreeJson(*state).dump(2) + "\n# kvcache diagnose\n" + findingsText(findings) +
         "# kvcache diagnose -o json\n" + findingsJson(findings).dump(2) + "\n# exit code " +
         (anyProblem(findings) ? "3" : "0") + "\n# operator metrics\n" + metricsText(*state);
}

class ObserveGolden : public testing::TestWithParam<std::string> {};

TEST_P(ObserveGolden, MatchesExpected) {
  const std::string stem = GetParam();
  auto documents = parseYamlDocuments(golden::readFile(kDir / (stem + ".yaml")));
  ASSERT_TRUE(documents.ok()) << documents.status().message();
  ASSERT_EQ(documents->size(), 1u);
  EXPECT_EQ(golden::compare(kDir / (stem + ".golden"), render(documents->front().value)), "");
}

INSTANTIATE_TEST_SUITE_P(Cases, ObserveGolden, testing::ValuesIn(golden::discover(kDir, ".yaml")),
                         [](const testing::TestParamInfo<std::string>& param) {
                           return golden::caseName(param.param);
                         });

TEST(ObserveGoldenCorpus, EveryGoldenHasAnInput) {
  EXPECT_EQ(golden::goldensWithoutInput(kDir), std::vector<std::string>{}) << "observe/";
}

}  // namespace
}  // namespace kvc::policy
