// The reuse probe corpus (kvcache probe, docs/observability.md): one YAML input per case under
// test/golden/probe/NNN-behaviour.yaml, compared with its .golden next to it. KVC_UPDATE_GOLDEN=1
// rewrites the goldens; a golden without an input fails the run, and so does an unknown input key.
//
// A case is one of:
//   pod:     a probe Pod spec (namespace, binding, run, replica, engine vLLM|SGLang, image,
//            pullPolicy, nodeSelector, script, workload {seed, model, prompts, prefixBlocks,
//            suffixBlocks, blockTokens, blockBytes, deadlineSeconds, serveSeconds}); golden: the
//            Pod as YAML
//   report:  a run (namespace, binding, engine, run, seed, image) and its probes, each either
//            {pod, node, result: <the replica's termination log, as an object or a string>} or
//            {pod, unreported: {stage: admission|start|no-result, detail}}, and `cleanup:` the
//            cleanup Pod's termination log (absent: no probe reached the store; `keepBlocks: true`:
//            none ran);
//            golden: the table, then the -o json document, then the exit code
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "golden.h"
#include "kvc/common/yaml.h"
#include "kvc/policy/probe/probe_pod.h"
#include "kvc/policy/probe/probe_report.h"

namespace kvc::policy {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = KVC_GOLDEN_PROBE_DIR;

void expectKeys(const Json& object, const std::set<std::string>& known, const std::string& what) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (!known.contains(it.key())) {
      ADD_FAILURE() << "unknown " << what << " key " << it.key();
    }
  }
}

std::string renderPod(const Json& in) {
  expectKeys(in,
             {"namespace", "binding", "run", "replica", "engine", "image", "pullPolicy",
              "nodeSelector", "script", "workload"},
             "pod");
  ProbePodSpec spec;
  spec.namespace_name = in.value("namespace", std::string("team-a"));
  spec.binding = in.value("binding", std::string("team-a"));
  spec.run = in.value("run", std::string("0a1b2c"));
  spec.replica = in.value("replica", 1);
  spec.engine = in.value("engine", std::string("vLLM")) == "SGLang" ? Engine::SGLang : Engine::VLLM;
  spec.image = in.value("image", std::string("kvcache-operator/store:0.3.13.post1-cpu"));
  spec.pull_policy = in.value("pullPolicy", std::string("IfNotPresent"));
  spec.node_selector = in.value("nodeSelector", std::map<std::string, std::string>{});
  spec.script = in.value("script", std::string("print('probe')"));
  const Json w = in.value("workload", Json::object());
  expectKeys(w,
             {"seed", "model", "prompts", "prefixBlocks", "suffixBlocks", "blockTokens",
              "blockBytes", "deadlineSeconds", "serveSeconds"},
             "workload");
  spec.workload.seed = w.value("seed", std::string("0a1b2c"));
  spec.workload.model = w.value("model", spec.workload.model);
  spec.workload.prompts = w.value("prompts", spec.workload.prompts);
  spec.workload.prefix_blocks = w.value("prefixBlocks", spec.workload.prefix_blocks);
  spec.workload.suffix_blocks = w.value("suffixBlocks", spec.workload.suffix_blocks);
  spec.workload.block_tokens = w.value("blockTokens", 64);
  spec.workload.block_bytes = w.value("blockBytes", spec.workload.block_bytes);
  spec.workload.deadline_seconds = w.value("deadlineSeconds", spec.workload.deadline_seconds);
  spec.workload.serve_seconds = w.value("serveSeconds", spec.workload.serve_seconds);
  return toYaml(renderProbePod(spec));
}

ProbeStage unreportedStage(const std::string& name) {
  if (name == "admission") {
    return ProbeStage::Admission;
  }
  return name == "start" ? ProbeStage::Start : ProbeStage::NoResult;
}

std::string renderReport(const Json& in) {
  expectKeys(
      in,
      {"namespace", "binding", "engine", "run", "seed", "image", "probes", "cleanup", "keepBlocks"},
      "report");
  ProbeReport report;
  report.namespace_name = in.value("namespace", std::string("team-a"));
  report.binding = in.value("binding", std::string("team-a"));
  report.engine = in.value("engine", std::string("vLLM"));
  report.run = in.value("run", std::string("0a1b2c"));
  report.seed = in.value("seed", report.run);
  report.image = in.value("image", std::string("kvcache-operator/store:0.3.13.post1-cpu"));
  int replica = 0;
  for (const Json& p : in.value("probes", Json::array())) {
    expectKeys(p, {"pod", "node", "result", "unreported"}, "probe");
    ++replica;
    const std::string pod =
        p.value("pod", "kvcache-probe-" + report.run + "-" + std::to_string(replica));
    ProbeResult result;
    if (p.contains("unreported")) {
      const Json& u = p["unreported"];
      result = unreportedProbe(replica, pod, unreportedStage(u.value("stage", std::string())),
                               u.value("detail", std::string()));
    } else {
      const Json& raw = p["result"];
      auto parsed = parseProbeResult(raw.is_string() ? raw.get<std::string>() : raw.dump());
      if (!parsed.ok()) {
        return "# error\n" + parsed.status().toString() + "\n";
      }
      result = *parsed;
      result.pod = pod;
      result.node = p.value("node", std::string());
    }
    report.probes.push_back(result);
  }
  if (in.contains("cleanup")) {
    auto cleanup = parseProbeResult(in["cleanup"].dump());
    if (!cleanup.ok()) {
      return "# error\n" + cleanup.status().toString() + "\n";
    }
    report.cleanup = *cleanup;
  }
  report.blocks_kept = in.value("keepBlocks", false);
  return "# table\n" + probeReportTable(report) + "# -o json\n" + probeReportJson(report).dump(2) +
         "\n# exit code " + (report.ok() ? "0" : "3") + "\n";
}

std::string render(const Json& input) {
  expectKeys(input, {"pod", "report"}, "case");
  if (input.contains("pod")) {
    return renderPod(input["pod"]);
  }
  return renderReport(input.value("report", Json::object()));
}

class ProbeGolden : public testing::TestWithParam<std::string> {};

TEST_P(ProbeGolden, MatchesExpected) {
  const std::string stem = GetParam();
  auto documents = parseYamlDocuments(golden::readFile(kDir / (stem + ".yaml")));
  ASSERT_TRUE(documents.ok()) << documents.status().message();
  ASSERT_EQ(documents->size(), 1u);
  EXPECT_EQ(golden::compare(kDir / (stem + ".golden"), render(documents->front().value)), "");
}

INSTANTIATE_TEST_SUITE_P(Cases, ProbeGolden, testing::ValuesIn(golden::discover(kDir, ".yaml")),
                         [](const testing::TestParamInfo<std::string>& param) {
                           return golden::caseName(param.param);
                         });

TEST(ProbeGoldenCorpus, EveryGoldenHasAnInput) {
  EXPECT_EQ(golden::goldensWithoutInput(kDir), std::vector<std::string>{}) << "probe/";
}

}  // namespace
}  // namespace kvc::policy
