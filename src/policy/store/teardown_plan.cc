#include "kvc/policy/store/teardown_plan.h"

#include <algorithm>
#include <map>

#include "kvc/api/backend_conditions.h"
#include "kvc/api/labels.h"
#include "kvc/api/message.h"
#include "kvc/policy/base/text.h"
#include "kvc/policy/store/tier_cleanup.h"

namespace kvc::policy {
namespace {

namespace bc = api::backend;

constexpr std::string_view kComponentLabel = "app.kubernetes.io/component";

// "Deployment gpustack-system/mooncake-dram-leader"
std::string describe(const Json& object) {
  return object.value("kind", std::string()) + " " + stringAt(object, {"metadata", "namespace"}) +
         "/" + stringAt(object, {"metadata", "name"});
}

// KVCacheWorkloadNotTerminated for a Deployment or DaemonSet whose Pods are still on nodes
// `grace + kWorkloadOverdueSeconds` after its deletion began.
std::optional<std::string> overdue(const StoreChild& child, const std::vector<Json>& pods) {
  const std::string kind = child.object.value("kind", std::string());
  if (kind != "Deployment" && kind != "DaemonSet") {
    return std::nullopt;
  }
  const std::string component = api::label(child.object, kComponentLabel);
  std::set<std::string> nodes;
  std::int64_t grace = 0;
  for (const Json& pod : pods) {
    if (api::label(pod, kComponentLabel) == component) {
      nodes.insert(pod.value(Json::json_pointer("/spec/nodeName"), std::string()));
      grace = std::max(grace, pod.value(Json::json_pointer("/spec/terminationGracePeriodSeconds"),
                                        std::int64_t{30}));
    }
  }
  const std::optional<std::int64_t>& since = child.deleting_for_seconds;
  if (nodes.empty() || !since || *since <= grace + kWorkloadOverdueSeconds) {
    return std::nullopt;
  }
  const std::vector<std::string> node_names(nodes.begin(), nodes.end());
  return describe(child.object) + " still has Pods on " + api::nameList(node_names) + " " +
         std::to_string(*since) + " s after its deletion began; check those nodes' kubelets";
}

// a. The store's objects deleted in the foreground, and where that stands.
std::string planWorkloads(const TeardownObservation& seen, TeardownPlan& plan) {
  // The NetworkPolicies go last, once nothing they guard is left.
  bool guarding = !seen.store_pods.empty();
  for (const StoreChild& child : seen.children) {
    guarding = guarding || child.resource != "networkpolicies";
  }
  std::vector<std::string> names;
  for (const StoreChild& child : seen.children) {
    const bool held = guarding && child.resource == "networkpolicies";
    if (!held && stringAt(child.object, {"metadata", "deletionTimestamp"}).empty()) {
      plan.delete_in_foreground.push_back(child);
    }
    names.push_back(describe(child.object));
    if (auto message = overdue(child, seen.store_pods)) {
      plan.workload_not_terminated.push_back(std::move(*message));
    }
  }
  return "deleting the store's workloads: " + api::nameList(names) + " (" +
         plural(static_cast<std::int64_t>(seen.store_pods.size()), "store Pod") + " left)";
}

// The other backend whose tier lies on `node` at a path overlapping `path` ("" when none).
std::string sharedWith(const TeardownObservation& seen, const Json& node, const std::string& path) {
  std::string shared_with;
  for (const api::KVCacheBackend& other : seen.other_backends) {
    for (const api::MemberGroup& theirs : other.spec.members) {
      if (theirs.local_disk && tierPathsOverlap(theirs.local_disk->path, path) &&
          nodeSelectedBy(node, theirs)) {
        shared_with = other.metadata.name;
      }
    }
  }
  return shared_with;
}

// What an ended cleanup Pod reports, when it did not go as planned.
std::optional<NodeEvent> cleanupOutcome(const TeardownObservation& seen, const Json& node,
                                        const Json& pod, const std::string& what) {
  const std::string phase = pod.value(Json::json_pointer("/status/phase"), std::string());
  std::optional<TierCleanupResult> result;
  for (const Json& status :
       pod.value(Json::json_pointer("/status/containerStatuses"), Json::array())) {
    result = parseTierCleanup(
        status.value(Json::json_pointer("/state/terminated/message"), std::string()));
  }
  const std::string name = stringAt(pod, {"metadata", "name"});
  if (!result) {
    return NodeEvent{node, std::string(kEventTierNotCleaned),
                     what + " was not emptied: cleanup Pod " + name + " " + phase + " (" +
                         pod.value(Json::json_pointer("/status/reason"), std::string("no result")) +
                         ")"};
  }
  if (result->remaining != 0) {
    return NodeEvent{node, std::string(kEventTierPartlyEmptied),
                     what + " was partly emptied: " + formatTierCleanup(*result) +
                         " (see the log of Pod " + seen.inputs.namespace_name + "/" + name + ")"};
  }
  return std::nullopt;
}

// c. One group's tier on each node it selects; returns how many cleanup Pods run (or are
// created now).
std::size_t planTier(const TeardownObservation& seen, const TierGroupObservation& tier,
                     TeardownPlan& plan) {
  const api::KVCacheBackend& backend = seen.backend;
  if (tier.group < 0 || static_cast<std::size_t>(tier.group) >= backend.spec.members.size() ||
      !backend.spec.members[tier.group].local_disk) {
    return 0;  // not a group with a disk tier
  }
  const std::string& path = backend.spec.members[tier.group].local_disk->path;
  const std::string what = "the tier " + path + " of KVCacheBackend " + backend.metadata.name;
  std::map<std::string, Json> cleaners;
  for (const Json& pod : tier.cleaners) {
    cleaners[pod.value(Json::json_pointer("/spec/nodeName"), std::string())] = pod;
  }
  std::size_t running = 0;
  for (const Json& node : tier.nodes) {
    const std::string node_name = stringAt(node, {"metadata", "name"});
    if (const std::string shared = sharedWith(seen, node, path); !shared.empty()) {
      plan.node_events.push_back(
          {node, std::string(kEventTierSharedPath),
           what + " overlaps KVCacheBackend " + shared + "'s tier on this node: not emptied"});
      continue;
    }
    auto it = cleaners.find(node_name);
    if (it == cleaners.end()) {
      auto pod = tierCleanupPod(backend, tier.group, node_name, seen.inputs);
      if (!pod.ok()) {
        plan.node_events.push_back({node, std::string(kEventTierNotCleaned),
                                    what + " was not emptied: " + pod.status().message()});
        continue;
      }
      plan.create_cleaners.push_back({tier.group, std::move(pod).value()});
      ++running;
      continue;
    }
    const std::string phase = it->second.value(Json::json_pointer("/status/phase"), std::string());
    if (phase != "Succeeded" && phase != "Failed") {
      ++running;
      continue;
    }
    if (auto outcome = cleanupOutcome(seen, node, it->second, what)) {
      plan.node_events.push_back(std::move(*outcome));
    }
  }
  return running;
}

void planStatus(const TeardownObservation& seen, std::string where, TeardownPlan& plan) {
  plan.status = teardownStatusFor(seen, where, seen.backend);
  plan.where = std::move(where);
  plan.next = BackendNext::TeardownPoll;
}

}  // namespace

TeardownPlan planTeardown(const TeardownObservation& seen) {
  TeardownPlan plan;
  if (!storeWorkloadsGone(seen)) {
    planStatus(seen, planWorkloads(seen, plan), plan);
    return plan;
  }
  plan.delete_lease = true;  // b.
  std::size_t running = 0;
  for (const TierGroupObservation& tier : seen.tiers) {
    running += planTier(seen, tier, plan);
  }
  if (running > 0) {
    // The Node Events wait until every cleanup Pod has ended.
    plan.node_events.clear();
    planStatus(seen,
               "emptying the disk tier (" +
                   plural(static_cast<std::int64_t>(running), "cleanup Pod") + " running)",
               plan);
    return plan;
  }
  plan.release = true;  // d.
  plan.remove_finalizer = api::hasFinalizer(seen.backend.metadata, bc::kFinalizer);
  plan.next = BackendNext::Done;
  return plan;
}

BackendStatusPlan teardownStatusFor(const TeardownObservation& seen, std::string_view where,
                                    const api::KVCacheBackend& current) {
  BackendStatusPlan out{backendConsumers(current, seen.gone), {}};
  out.status = teardownStatus(out.facts, where, current.metadata.generation, seen.now);
  return out;
}

bool storeWorkloadsGone(const TeardownObservation& seen) {
  return seen.children.empty() && seen.store_pods.empty();
}

bool nodeSelectedBy(const Json& node, const api::MemberGroup& group) {
  return api::matchesSelector(node, nodeSelectorQuery(group));
}

}  // namespace kvc::policy
