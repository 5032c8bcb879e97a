#include "kvc/policy/usage/engine_target.h"

#include <gtest/gtest.h>

namespace kvc::policy {
namespace {

Json readyPod(Json containers, std::string ip = "10.210.1.7") {
  return Json{{"metadata", {{"name", "chat-0"}, {"namespace", "team-a"}}},
              {"spec", {{"containers", std::move(containers)}}},
              {"status",
               {{"podIP", std::move(ip)},
                {"conditions", Json::array({{{"type", "Ready"},
                                             {"status", "True"},
                                             {"lastTransitionTime", "2026-12-05T10:00:00Z"}}})}}}};
}

std::string urlOf(const Json& pod, std::string_view engine) {
  auto target = engineMetricsTarget(pod, engine);
  if (const auto* why = std::get_if<std::string>(&target)) {
    return "none: " + *why;
  }
  return std::get<EngineTarget>(target).url;
}

TEST(EngineTarget, TheEnginesDefaultPorts) {
  const Json pod = readyPod(Json::array({{{"name", "server"}, {"args", {"serve", "m"}}}}));
  EXPECT_EQ(urlOf(pod, "vllm"), "http://10.210.1.7:8000/metrics");
  EXPECT_EQ(urlOf(pod, "sglang"), "http://10.210.1.7:30000/metrics");
}

TEST(EngineTarget, ThePortFlagInEitherSpellingTheLastWins) {
  EXPECT_EQ(urlOf(readyPod(Json::array({{{"name", "s"}, {"args", {"--port", "9000"}}}})), "vllm"),
            "http://10.210.1.7:9000/metrics");
  EXPECT_EQ(urlOf(readyPod(Json::array({{{"name", "s"},
                                         {"command", {"vllm", "--port=7000"}},
                                         {"args", {"--port", "7001"}}}})),
                  "vllm"),
            "http://10.210.1.7:7001/metrics");
  EXPECT_EQ(urlOf(readyPod(Json::array({{{"name", "s"}, {"args", {"--port", "http"}}}})), "vllm"),
            "none: the metrics port is not a port number (0)");
}

TEST(EngineTarget, APortNamedMetricsWins) {
  const Json pod = readyPod(
      Json::array({{{"name", "s"},
                    {"args", {"--port", "9000"}},
                    {"ports", Json::array({{{"name", "metrics"}, {"containerPort", 9400}}})}}}));
  EXPECT_EQ(urlOf(pod, "sglang"), "http://10.210.1.7:9400/metrics");
}

TEST(EngineTarget, TheContainerTheAnnotationNames) {
  Json pod = readyPod(Json::array({{{"name", "sidecar"}, {"args", {"--port", "1"}}},
                                   {{"name", "engine"}, {"args", {"--port", "8100"}}}}));
  EXPECT_EQ(urlOf(pod, "vllm"), "http://10.210.1.7:1/metrics");  // the first, without it
  pod["metadata"]["annotations"] = {{"kvcache.gpustack.ai/container", "engine"}};
  EXPECT_EQ(urlOf(pod, "vllm"), "http://10.210.1.7:8100/metrics");
}

TEST(EngineTarget, OnlyAReadyPodWithAnIp) {
  Json pod = readyPod(Json::array({{{"name", "s"}}}));
  pod["status"]["conditions"][0]["status"] = "False";
  EXPECT_EQ(urlOf(pod, "vllm"), "none: not Ready");
  EXPECT_FALSE(readySince(pod));
  EXPECT_EQ(urlOf(readyPod(Json::array({{{"name", "s"}}}), ""), "vllm"), "none: no Pod IP");
  EXPECT_EQ(urlOf(readyPod(Json::array({{{"name", "s"}}}), "fd00::7"), "vllm"),
            "http://[fd00::7]:8000/metrics");
  EXPECT_EQ(readySince(readyPod(Json::array())), "2026-12-05T10:00:00Z");
}

TEST(EngineTarget, EngineFamilies) {
  EXPECT_EQ(engineFamily("vLLM"), "vllm");
  EXPECT_EQ(engineFamily("SGLang"), "sglang");
  EXPECT_EQ(engineFamily("sglang"), "sglang");
  EXPECT_EQ(engineFamily("MindIE"), "");
}

}  // namespace
}  // namespace kvc::policy
