#include "kvc/policy/model_deployment/model_deployment_replicas.h"

#include <algorithm>
#include <cstddef>
#include <tuple>

#include "kvc/api/message.h"
#include "kvc/api/model_deployment_conditions.h"
#include "kvc/policy/base/json_lookup.h"
#include "kvc/policy/base/text.h"
#include "kvc/policy/model_deployment/model_deployment_render.h"
#include "kvc/policy/store/store_workload.h"

namespace kvc::policy {
namespace {

namespace md = api::model_deployment;

std::optional<std::int64_t> number(const Json& object, std::string_view key) {
  const Json& value = field(object, key);
  return value.is_number_integer() ? std::optional(value.get<std::int64_t>()) : std::nullopt;
}

std::string labelText(const Json& pod, std::string_view key) {
  return text(field(field(pod, "metadata"), "labels"), key);
}

// The DisruptionTarget condition when it is True, else null.
const Json* disruption(const Json& pod) {
  const Json& conditions = field(field(pod, "status"), "conditions");
  if (!conditions.is_array()) {
    return nullptr;
  }
  for (const Json& condition : conditions) {
    if (text(condition, "type") == "DisruptionTarget" && text(condition, "status") == "True") {
      return &condition;
    }
  }
  return nullptr;
}

bool kubeletEvicted(const Json& pod) {
  const Json& status = field(pod, "status");
  return text(status, "phase") == "Failed" && text(status, "reason") == "Evicted";
}

bool evicted(const Json& pod) { return disruption(pod) != nullptr || kubeletEvicted(pod); }

bool deleting(const Json& pod) {
  return !field(field(pod, "metadata"), "deletionTimestamp").is_null();
}

// "replica Pod team-a/qwen-chat-server-5d9f-x2k (role server, node gpu-0)".
std::string replicaName(const Json& pod) {
  const Json& metadata = field(pod, "metadata");
  std::string out = "replica Pod " + text(metadata, "namespace") + "/" + text(metadata, "name");
  std::string where;
  if (const std::string role = labelText(pod, "app.kubernetes.io/component"); !role.empty()) {
    where = "role " + role;
  }
  if (const std::string node = text(field(pod, "spec"), "nodeName"); !node.empty()) {
    where += (where.empty() ? "" : ", ") + std::string("node ") + node;
  }
  return where.empty() ? out : out + " (" + where + ")";
}

std::string trimmed(std::string message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
    message.pop_back();
  }
  return message;
}

std::string workloadOf(const Json& pod) {
  const std::string instance = labelText(pod, "app.kubernetes.io/instance");
  const std::string role = labelText(pod, "app.kubernetes.io/component");
  return instance.empty() || role.empty() ? std::string("Its role's Deployment")
                                          : "Its Deployment " + roleWorkloadName(instance, role);
}

ModelDeploymentEvent evictionEvent(const Json& pod) {
  std::string how;
  std::string said;
  if (const Json* condition = disruption(pod)) {
    const std::string reason = text(*condition, "reason");
    if (reason == "EvictionByEvictionAPI") {
      how = "by the eviction API (a node drain or an eviction request)";
    } else if (reason == "PreemptionByScheduler") {
      how = "by the scheduler, to make room for a Pod of higher priority";
    } else if (reason == "DeletionByTaintManager") {
      how = "because its node carries a NoExecute taint it does not tolerate";
    } else if (reason == "TerminationByKubelet") {
      how = "by the kubelet (node pressure or a node shutdown)";
    } else {
      how = reason.empty() ? std::string("(DisruptionTarget)") : "(" + reason + ")";
    }
    said = trimmed(text(*condition, "message"));
  } else {
    how = "by the kubelet under node pressure";
    said = trimmed(text(field(pod, "status"), "message"));
  }
  std::string message = replicaName(pod) + " was evicted " + how;
  if (!said.empty()) {
    message += ": " + api::boundDetail(said);
  }
  message += ". " + workloadOf(pod) +
             " starts a replacement; the KV blocks the engine held in its own memory are gone "
             "with it, and what it wrote to the shared cache stays there for the other replicas";
  return {"Warning", std::string(md::kEventReplicaEvicted), std::move(message)};
}

ModelDeploymentEvent leavingEvent(const Json& pod) {
  std::string message = replicaName(pod) +
                        " is leaving: it was deleted (a scale-down, a rollout "
                        "replacing it, or a delete)";
  if (auto grace = number(field(pod, "metadata"), "deletionGracePeriodSeconds")) {
    message += " and has " + std::to_string(*grace) +
               " s (terminationGracePeriodSeconds) to "
               "finish the requests it serves";
  }
  message += ". What it wrote to the shared cache stays there for the other replicas";
  return {"Normal", std::string(md::kEventReplicaLeaving), std::move(message)};
}

ModelDeploymentEvent restartEvent(const Json& pod, const Json& container_status,
                                  std::int64_t restarts) {
  const std::string container = text(container_status, "name");
  const Json& last = field(field(container_status, "lastState"), "terminated");
  std::string message = "container " + inQuotes(container) + " of " + replicaName(pod) +
                        " restarted (restart " + std::to_string(restarts) + ")";
  if (last.is_object()) {
    std::string how;
    if (const std::string reason = text(last, "reason"); !reason.empty()) {
      how = reason;
    }
    if (auto code = number(last, "exitCode")) {
      how += (how.empty() ? "" : ", ") + std::string("exit code ") + std::to_string(*code);
    }
    if (!how.empty()) {
      message += ": it last terminated with " + how;
    }
    if (const std::string said = trimmed(text(last, "message")); !said.empty()) {
      message += " (" + api::boundDetail(said) + ")";
    }
  }
  const Json& metadata = field(pod, "metadata");
  message += ". Its logs before the restart: kubectl -n " + text(metadata, "namespace") + " logs " +
             text(metadata, "name") + " -c " + container + " --previous";
  return {"Warning", std::string(md::kEventReplicaRestarted), std::move(message)};
}

// restartCount of each container, by name.
std::map<std::string, std::int64_t> restartCounts(const Json& pod) {
  std::map<std::string, std::int64_t> out;
  const Json& statuses = field(field(pod, "status"), "containerStatuses");
  if (statuses.is_array()) {
    for (const Json& status : statuses) {
      out[text(status, "name")] = number(status, "restartCount").value_or(0);
    }
  }
  return out;
}

// The build the engine container of a running Pod runs, or "" when it does not report one.
std::string engineBuild(const Json& pod) {
  const Json& statuses = field(field(pod, "status"), "containerStatuses");
  if (!statuses.is_array()) {
    return {};
  }
  for (const Json& status : statuses) {
    const bool running = field(field(status, "state"), "running").is_object();
    if (text(status, "name") != kEngineContainer || !running) {
      continue;
    }
    std::string id = text(status, "imageID");
    return id.empty() ? text(status, "image") : id;
  }
  return {};
}

std::string podSpecHash(const Json& pod) {
  return text(field(field(pod, "metadata"), "annotations"), kPodSpecHashAnnotation);
}

// What runtimeVersionSkew reads of one Pod.
std::tuple<std::string, bool, std::string, std::string> skewInputs(const Json& pod) {
  return {text(field(pod, "status"), "phase"), deleting(pod), podSpecHash(pod), engineBuild(pod)};
}

// "a, b and 3 more".
std::string someNames(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 3;
  std::vector<std::string> shown(
      names.begin(), names.begin() + static_cast<std::ptrdiff_t>(std::min(kShown, names.size())));
  std::string out = commaList(shown);
  if (names.size() > kShown) {
    out += " and " + std::to_string(names.size() - kShown) + " more";
  }
  return out;
}

}  // namespace

std::vector<ModelDeploymentEvent> replicaTransitionEvents(const Json& before, const Json& after) {
  std::vector<ModelDeploymentEvent> out;
  if (!before.is_object() || !after.is_object()) {
    return out;
  }
  const bool evicted_now = evicted(after);
  if (evicted_now && !evicted(before)) {
    out.push_back(evictionEvent(after));
  }
  if (deleting(after) && !deleting(before) && !evicted_now) {
    out.push_back(leavingEvent(after));
  }
  const std::map<std::string, std::int64_t> was = restartCounts(before);
  const Json& statuses = field(field(after, "status"), "containerStatuses");
  if (statuses.is_array()) {
    for (const Json& status : statuses) {
      const std::int64_t now = number(status, "restartCount").value_or(0);
      auto it = was.find(text(status, "name"));
      const std::int64_t then = it == was.end() ? 0 : it->second;
      if (now > then) {
        out.push_back(restartEvent(after, status, now));
      }
    }
  }
  return out;
}

bool skewInputsChanged(const Json& before, const Json& after) {
  return skewInputs(before) != skewInputs(after);
}

std::string replicaOwnerKey(const Json& pod) {
  if (labelText(pod, "app.kubernetes.io/name") != kModelDeploymentAppName) {
    return {};
  }
  const std::string instance = labelText(pod, "app.kubernetes.io/instance");
  if (instance.empty()) {
    return {};
  }
  return text(field(pod, "metadata"), "namespace") + "/" + instance;
}

std::optional<RuntimeSkew> runtimeVersionSkew(
    std::string_view deployment, const std::vector<Json>& pods,
    const std::map<std::string, std::string>& current_hashes) {
  // build -> role -> Pods
  std::map<std::string, std::map<std::string, std::vector<std::string>>> builds;
  std::string namespace_name;
  for (const Json& pod : pods) {
    if (deleting(pod) || text(field(pod, "status"), "phase") != "Running") {
      continue;
    }
    const std::string role = labelText(pod, "app.kubernetes.io/component");
    auto current = current_hashes.find(role);
    const std::string hash = podSpecHash(pod);
    if (current == current_hashes.end() || current->second.empty() || hash != current->second) {
      continue;  // an older template: the rollout replaces it
    }
    const std::string build = engineBuild(pod);
    if (build.empty()) {
      continue;
    }
    namespace_name = text(field(pod, "metadata"), "namespace");
    builds[build][role].push_back(text(field(pod, "metadata"), "name"));
  }
  if (builds.size() < 2) {
    return std::nullopt;
  }
  RuntimeSkew skew;
  std::vector<std::string> parts;
  for (auto& [build, roles] : builds) {
    skew.signature += (skew.signature.empty() ? "" : "|") + build;
    std::vector<std::string> on;
    for (auto& [role, names] : roles) {
      std::sort(names.begin(), names.end());
      on.push_back("role " + role + ": " + (names.size() == 1 ? "Pod " : "Pods ") +
                   someNames(names));
    }
    parts.push_back(build + " (" + commaList(on, "") + ")");
  }
  std::string message = "the running replicas of ModelDeployment " + namespace_name + "/" +
                        std::string(deployment) + " run " + std::to_string(builds.size()) +
                        " engine builds: ";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    message += (i == 0 ? "" : "; ") + parts[i];
  }
  message +=
      ". Replicas of one deployment should run one build: two builds can answer the same "
      "request differently, and replicas attached to one reuse domain would serve each "
      "other KV blocks computed by another build. Fix: name the engine image by digest or "
      "by a fixed version tag (spec.engine.image, or the same roles[].image on every "
      "role), so that every node runs the same build";
  skew.event = {"Warning", std::string(md::kEventRuntimeVersionSkew), std::move(message)};
  return skew;
}

}  // namespace kvc::policy
