// The injection corpus: every file in test/golden/inject/cases/*.yaml is run through the same
// path as `kvcache inject` and compared with <case>.golden (admitted) or <case>.refused.
//
// A case may start with directive comments:
//   # cluster: NAME      use clusters/NAME.yaml instead of clusters/default.yaml
//   # namespace: NAME    the namespace of objects that do not name one (default "default")
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "golden.h"
#include "internal/cluster_file.h"
#include "internal/injection_run.h"

namespace kvc::cmd {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = KVC_GOLDEN_INJECT_DIR;

struct Directives {
  std::string cluster = "default";
  std::string namespace_name = "default";
};

Directives readDirectives(const fs::path& input) {
  Directives directives;
  std::istringstream lines(golden::readFile(input));
  std::string line;
  while (std::getline(lines, line) && line.starts_with("#")) {
    for (auto [key, target] :
         {std::pair<std::string, std::string*>{"# cluster: ", &directives.cluster},
          {"# namespace: ", &directives.namespace_name}}) {
      if (line.starts_with(key)) {
        *target = line.substr(key.size());
      }
    }
  }
  return directives;
}

// The refusal report of a run: per refused site, its label, then "Reason: message".
std::string refusalReport(const std::vector<DocumentOutcome>& outcomes) {
  std::string report;
  for (const DocumentOutcome& document : outcomes) {
    for (const SiteOutcome& site : document.sites) {
      if (site.decision.verdict == policy::Verdict::Refused) {
        report += site.site.label + "\n" +
                  std::string(policy::refusalReasonName(site.decision.refusal->reason)) + ": " +
                  site.decision.refusal->message + "\n";
      }
    }
  }
  return report;
}

class InjectGolden : public testing::TestWithParam<std::string> {};

TEST_P(InjectGolden, MatchesExpected) {
  const std::string stem = GetParam();
  const fs::path input = kDir / "cases" / (stem + ".yaml");
  const Directives directives = readDirectives(input);
  auto cluster = loadClusterFile((kDir / "clusters" / (directives.cluster + ".yaml")).string());
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  auto outcomes =
      runInjection(input.string(), cluster->snapshot, cluster->settings, directives.namespace_name);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status().message();

  const std::string refusals = refusalReport(*outcomes);
  const fs::path golden = kDir / "cases" / (stem + ".golden");
  const fs::path refused = kDir / "cases" / (stem + ".refused");
  if (refusals.empty()) {
    EXPECT_EQ(golden::compare(golden, formatDocuments(*outcomes, "yaml")), "");
    EXPECT_TRUE(golden::updating() || !fs::exists(refused))
        << refused << " exists but the case was admitted";
    if (golden::updating()) {
      fs::remove(refused);
    }
  } else {
    EXPECT_EQ(golden::compare(refused, refusals), "");
    EXPECT_TRUE(golden::updating() || !fs::exists(golden))
        << golden << " exists but the case was refused";
    if (golden::updating()) {
      fs::remove(golden);
    }
  }
}

std::vector<std::string> cases() { return golden::discover(kDir / "cases", ".yaml"); }

INSTANTIATE_TEST_SUITE_P(Cases, InjectGolden, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<std::string>& param) {
                           std::string name;
                           for (char c : param.param) {
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return name;
                         });

// Stale goldens fail: every expected file must belong to an input.
TEST(InjectGoldenCorpus, HasNoStaleExpectedFiles) {
  const std::vector<std::string> inputs = cases();
  for (const std::string extension : {".golden", ".refused"}) {
    for (const std::string& stem : golden::discover(kDir / "cases", extension)) {
      EXPECT_TRUE(std::binary_search(inputs.begin(), inputs.end(), stem))
          << "cases/" << stem << extension << " has no cases/" << stem << ".yaml";
    }
  }
}

TEST(InjectGoldenCorpus, IsNotEmpty) { EXPECT_GT(cases().size(), 50u); }

}  // namespace
}  // namespace kvc::cmd
