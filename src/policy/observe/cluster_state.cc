#include "kvc/policy/observe/cluster_state.h"

#include <algorithm>

#include "kvc/policy/inject/keys.h"

namespace kvc::policy {
namespace {

void sortByName(std::vector<Json>& objects) {
  std::stable_sort(objects.begin(), objects.end(),
                   [](const Json& a, const Json& b) { return objectName(a) < objectName(b); });
}

bool injected(const Json& pod) {
  return !stringAt(pod, {"metadata", "annotations", kAnnotationInjected.data()}).empty();
}

}  // namespace

bool beingDeleted(const Json& object) {
  return object.contains("metadata") && object["metadata"].is_object() &&
         object["metadata"].contains("deletionTimestamp");
}

bool mattersNow(const Json& object, const ConditionView& condition) {
  if (condition.type == "CacheUsed") {
    return condition.status == "False";
  }
  return beingDeleted(object) || (condition.type != "Deletable" && condition.type != "Releasable");
}

std::string objectName(const Json& object) {
  const std::string namespace_name = stringAt(object, {"metadata", "namespace"});
  const std::string name = stringAt(object, {"metadata", "name"});
  return namespace_name.empty() ? name : namespace_name + "/" + name;
}

std::vector<ConditionView> conditionsOf(const Json& object) {
  std::vector<ConditionView> out;
  const Json conditions = object.value(Json::json_pointer("/status/conditions"), Json::array());
  if (!conditions.is_array()) {
    return out;
  }
  for (const Json& c : conditions) {
    if (c.is_object()) {
      out.push_back({c.value("type", std::string()), c.value("status", std::string()),
                     c.value("reason", std::string()), c.value("message", std::string())});
    }
  }
  return out;
}

std::optional<ConditionView> conditionOf(const Json& object, std::string_view type) {
  for (ConditionView& c : conditionsOf(object)) {
    if (c.type == type) {
      return std::move(c);
    }
  }
  return std::nullopt;
}

ClusterState normalizedState(ClusterState state) {
  std::erase_if(state.pods, [](const Json& pod) { return !injected(pod); });
  for (auto* list :
       {&state.backends, &state.pools, &state.bindings, &state.model_deployments, &state.pods}) {
    sortByName(*list);
  }
  return state;
}

Result<ClusterState> clusterStateFromObjects(const std::vector<Json>& objects) {
  ClusterState state;
  std::vector<Json> pending(objects.rbegin(), objects.rend());
  while (!pending.empty()) {
    Json object = std::move(pending.back());
    pending.pop_back();
    const std::string kind = object.value("kind", std::string());
    if (kind == "List" || kind.ends_with("List")) {
      const Json items = object.value("items", Json::array());
      for (auto it = items.rbegin(); it != items.rend(); ++it) {
        pending.push_back(*it);
      }
    } else if (kind == "KVCacheBackend") {
      state.backends.push_back(std::move(object));
    } else if (kind == "KVCachePool") {
      state.pools.push_back(std::move(object));
    } else if (kind == "KVCachePoolBinding") {
      state.bindings.push_back(std::move(object));
    } else if (kind == "ModelDeployment") {
      state.model_deployments.push_back(std::move(object));
    } else if (kind == "Pod") {
      state.pods.push_back(std::move(object));
    } else if (kind.empty()) {
      return invalidArgument("a document without kind (" + objectName(object) +
                             "): a recorded state is objects as the API server returns them");
    } else {
      return invalidArgument(
          "a recorded state holds KVCacheBackend, KVCachePool, "
          "KVCachePoolBinding, ModelDeployment and Pod objects, not '" +
          kind + "'");
    }
  }
  return normalizedState(std::move(state));
}

}  // namespace kvc::policy
