#include "internal/probe_run.h"

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "kvc/api/binding.h"
#include "kvc/api/settings.h"
#include "kvc/kube/resource.h"
#include "probe_script.h"

namespace kvc::cmd {
namespace {

using policy::ProbeResult;
using policy::ProbeStage;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kPoll{500};
constexpr std::chrono::milliseconds kRequestTimeout{10000};

std::string randomHex(int digits) {
  std::random_device device;
  std::ostringstream out;
  for (int i = 0; i < digits; ++i) {
    out << std::hex << (device() % 16);
  }
  return out.str();
}

// The Setting kv-cache-backend-image (and its pull policy): this project's store image, which
// carries the pinned wheel's Python client.
Status resolveImage(const kube::ClientPtr& client, ProbeRunOptions& options,
                    std::string& pull_policy) {
  const kube::Api config_maps(client, kube::resources::configMaps(),
                              std::string(api::kOperatorNamespace));
  api::Settings settings;
  auto config_map =
      options.image.empty()
          ? config_maps.withTimeout(kRequestTimeout).getOptional(api::kSettingsConfigMap)
          : kube::ApiResult<std::optional<Json>>(std::nullopt);
  if (!config_map.ok()) {
    if (!config_map.error().isForbidden()) {
      return config_map.status().withContext("reading the Settings ConfigMap");
    }
    // A caller who may not read the Settings gets the default store image (or names one).
  } else if (config_map->has_value()) {
    auto decoded = api::settingsFromConfigMap(**config_map);
    if (decoded.ok()) {
      settings = decoded->settings;
    }
  }
  if (options.image.empty()) {
    options.image = settings.kv_cache_backend_image;
  }
  pull_policy = settings.image_pull_policy;
  return okStatus();
}

// The reason a Pod that has not reported is not running: its container's waiting reason, or why
// it is not scheduled.
std::string whyNotRunning(const Json& pod) {
  for (const Json& status :
       pod.value(Json::json_pointer("/status/containerStatuses"), Json::array())) {
    const Json waiting = status.value(Json::json_pointer("/state/waiting"), Json());
    if (waiting.is_object()) {
      return waiting.value("reason", std::string()) + ": " +
             waiting.value("message", std::string());
    }
  }
  for (const Json& condition : pod.value(Json::json_pointer("/status/conditions"), Json::array())) {
    if (condition.value("status", "") == "False") {
      return condition.value("type", std::string()) + "=False " +
             condition.value("reason", std::string()) + ": " +
             condition.value("message", std::string());
    }
  }
  return "phase " + pod.value(Json::json_pointer("/status/phase"), std::string("Pending"));
}

// The result of a Pod that ended, or nullopt while it runs.
std::optional<ProbeResult> resultOf(const Json& pod, int replica, const std::string& name) {
  const std::string phase = pod.value(Json::json_pointer("/status/phase"), std::string());
  if (phase != "Succeeded" && phase != "Failed") {
    return std::nullopt;
  }
  Json terminated;
  for (const Json& status :
       pod.value(Json::json_pointer("/status/containerStatuses"), Json::array())) {
    terminated = status.value(Json::json_pointer("/state/terminated"), Json());
  }
  const std::string message =
      terminated.is_object() ? terminated.value("message", std::string()) : std::string();
  auto parsed = policy::parseProbeResult(message);
  ProbeResult result;
  if (parsed.ok()) {
    result = std::move(*parsed);
  } else {
    std::string why = "phase " + phase;
    if (terminated.is_object()) {
      why += ", exit code " + std::to_string(terminated.value("exitCode", -1)) + " (" +
             terminated.value("reason", std::string()) + ")";
    } else if (pod.contains("status") && pod["status"].contains("reason")) {
      why += ", " + pod["status"].value("reason", std::string()) + ": " +
             pod["status"].value("message", std::string());
    }
    result = policy::unreportedProbe(replica, name, ProbeStage::NoResult,
                                     why + "; kubectl logs " + name + " shows its output");
  }
  result.replica = replica;
  result.pod = name;
  result.node = pod.value(Json::json_pointer("/spec/nodeName"), std::string());
  return result;
}

struct Started {
  int replica;
  std::string name;
  std::optional<ProbeResult> result;  // set at once for a Pod that was refused
};

Started startReplica(const kube::Api& pods, const policy::ProbePodSpec& spec) {
  const std::string name = spec.clean ? policy::probeCleanupPodName(spec.run)
                                      : policy::probePodName(spec.run, spec.replica);
  auto created = pods.create(policy::renderProbePod(spec));
  Started started{spec.replica, name, std::nullopt};
  if (!created.ok()) {
    // An admission plugin's refusal (our webhook's, a PodSecurity level) is the answer; anything
    // else (no permission, the API server away) kept the Pod from being made.
    const std::string& message = created.error().message();
    const bool refused = message.find("admission webhook") != std::string::npos ||
                         message.find("violates PodSecurity") != std::string::npos;
    started.result =
        refused ? policy::unreportedProbe(spec.replica, name, ProbeStage::Admission, message)
                : policy::unreportedProbe(spec.replica, name, ProbeStage::Start,
                                          "creating it: " + message);
  }
  return started;
}

// Waits until every started Pod has reported or `deadline` passes; one GET a Pod a poll.
void awaitResults(const kube::Api& pods, std::vector<Started>& wave, Clock::time_point deadline,
                  std::ostream& progress) {
  while (true) {
    bool waiting = false;
    for (Started& s : wave) {
      if (s.result) {
        continue;
      }
      auto pod = pods.get(s.name);
      if (pod.ok()) {
        s.result = resultOf(*pod, s.replica, s.name);
        if (s.result) {
          progress << "probe " << s.replica << ": " << policy::probeStageName(s.result->stage)
                   << " (" << s.name << ")\n";
          continue;
        }
        if (Clock::now() >= deadline) {
          s.result = policy::unreportedProbe(
              s.replica, s.name, ProbeStage::Start,
              "it did not report within the timeout (" + whyNotRunning(*pod) + ")");
          continue;
        }
      } else if (pod.error().isNotFound() || Clock::now() >= deadline) {
        s.result = policy::unreportedProbe(s.replica, s.name, ProbeStage::NoResult,
                                           "its Pod could not be read: " + pod.error().message());
        continue;
      }
      waiting = true;
    }
    if (!waiting) {
      return;
    }
    std::this_thread::sleep_for(kPoll);
  }
}

}  // namespace

Result<policy::ProbeReport> runProbe(const kube::ClientPtr& client, ProbeRunOptions options,
                                     std::ostream& progress) {
  const kube::Api bindings =
      kube::Api(client, kube::resources::kvCachePoolBindings(), options.namespace_name)
          .withTimeout(kRequestTimeout);
  auto object = bindings.getOptional(options.binding);
  if (!object.ok()) {
    return object.status().withContext("reading KVCachePoolBinding " + options.namespace_name +
                                       "/" + options.binding);
  }
  if (!object->has_value()) {
    return invalidArgument("there is no KVCachePoolBinding " + options.binding + " in namespace " +
                           options.namespace_name + ": name one that `kubectl -n " +
                           options.namespace_name + " get kvcpb` lists");
  }
  auto binding = api::bindingFromJson(**object);
  if (!binding.ok()) {
    return binding.status();
  }
  if (options.workload.block_tokens <= 0) {
    options.workload.block_tokens =
        static_cast<int>(std::max<std::int64_t>(1, binding->spec.domain.block_size));
  }
  std::string pull_policy;
  KVC_RETURN_IF_ERROR(resolveImage(client, options, pull_policy));

  policy::ProbeReport report;
  report.namespace_name = options.namespace_name;
  report.binding = options.binding;
  report.engine = std::string(policy::engineDisplayName(options.engine));
  report.run = randomHex(6);
  if (options.workload.seed.empty()) {
    options.workload.seed = report.run;
  }
  report.seed = options.workload.seed;
  report.image = options.image;

  const kube::Api pods = kube::Api(client, kube::resources::pods(), options.namespace_name)
                             .withTimeout(kRequestTimeout);
  policy::ProbePodSpec spec;
  spec.namespace_name = options.namespace_name;
  spec.binding = options.binding;
  spec.run = report.run;
  spec.engine = options.engine;
  spec.image = options.image;
  spec.pull_policy = pull_policy;
  spec.node_selector = options.node_selector;
  spec.workload = options.workload;
  spec.script = std::string(kProbeReplicaScript);
  const auto budget =
      std::chrono::seconds(options.workload.deadline_seconds + options.workload.serve_seconds) +
      options.start_timeout;
  // The first replica alone: it writes the shared prefix the others then read together.
  std::vector<std::vector<int>> waves = {{1}, {}};
  for (int replica = 2; replica <= options.replicas; ++replica) {
    waves[1].push_back(replica);
  }
  std::vector<Started> all;
  for (const std::vector<int>& replicas : waves) {
    std::vector<Started> wave;
    for (int replica : replicas) {
      spec.replica = replica;
      wave.push_back(startReplica(pods, spec));
      progress << "probe " << replica << ": started " << wave.back().name << "\n";
    }
    awaitResults(pods, wave, Clock::now() + budget, progress);
    all.insert(all.end(), wave.begin(), wave.end());
  }
  // Every probe that reached the store may have written (or found an earlier run's blocks of the
  // same seed, which are the probe's own too: its keys name the probe's model).
  const bool reached =
      std::any_of(all.begin(), all.end(), [](const Started& s) { return s.result->lookups > 0; });
  if (!options.keep_blocks && reached) {
    spec.clean = true;
    spec.replica = 0;
    spec.replicas = options.replicas;
    std::vector<Started> cleanup = {startReplica(pods, spec)};
    progress << "cleanup: started " << cleanup[0].name << "\n";
    awaitResults(pods, cleanup, Clock::now() + budget, progress);
    report.cleanup = std::move(*cleanup[0].result);
    all.push_back(cleanup[0]);
  }
  report.blocks_kept = options.keep_blocks && reached;
  if (!options.keep) {
    kube::DeleteParams now;
    now.grace_period_seconds = 0;
    for (const Started& s : all) {
      (void)pods.remove(s.name, now);
    }
  }
  for (Started& s : all) {
    if (s.replica > 0) {
      report.probes.push_back(std::move(*s.result));
    }
  }
  return report;
}

}  // namespace kvc::cmd
