#include "kvc/policy/observe/status_tree.h"

#include <algorithm>
#include <set>

#include "kvc/common/quantity.h"

namespace kvc::policy {
namespace {

// The value at `pointer`, or absent (null): a figure the object does not report stays absent.
Json at(const Json& object, const char* pointer) {
  return object.value(Json::json_pointer(pointer), Json());
}

Json unhealthyConditions(const Json& object) {
  Json out = Json::array();
  for (const ConditionView& c : conditionsOf(object)) {
    if (c.status != "True" && mattersNow(object, c)) {
      out.push_back(
          {{"type", c.type}, {"status", c.status}, {"reason", c.reason}, {"message", c.message}});
    }
  }
  return out;
}

// true while the object is being deleted; absent (dropped by compact) otherwise.
Json deleting(const Json& object) { return beingDeleted(object) ? Json(true) : Json(); }

// Drops absent figures, so the JSON says "absent" by leaving the key out.
Json compact(Json object) {
  for (auto it = object.begin(); it != object.end();) {
    it = it->is_null() ? object.erase(it) : std::next(it);
  }
  return object;
}

Json workloadsOf(const ClusterState& state, const Json& binding) {
  const std::string namespace_name = stringAt(binding, {"metadata", "namespace"});
  const std::string name = stringAt(binding, {"metadata", "name"});
  Json out = Json::array();
  for (const Json& md : state.model_deployments) {
    if (stringAt(md, {"metadata", "namespace"}) == namespace_name &&
        stringAt(md, {"spec", "kvCache", "poolRef", "name"}) == name) {
      out.push_back(compact({{"kind", "ModelDeployment"},
                             {"name", objectName(md)},
                             {"phase", at(md, "/status/phase")},
                             {"conditions", unhealthyConditions(md)}}));
    }
  }
  for (const Json& pod : state.pods) {
    const Json record = Json::parse(
        stringAt(pod, {"metadata", "annotations", "kvcache.gpustack.ai/injected"}), nullptr, false);
    if (stringAt(pod, {"metadata", "namespace"}) == namespace_name && record.is_object() &&
        record.value("binding", std::string()) == name) {
      out.push_back(compact({{"kind", "Pod"},
                             {"name", objectName(pod)},
                             {"engine", record.value("engine", std::string())},
                             {"phase", at(pod, "/status/phase")},
                             {"node", at(pod, "/spec/nodeName")}}));
    }
  }
  return out;
}

Json bindingNode(const ClusterState& state, const Json& binding) {
  return compact({{"name", objectName(binding)},
                  {"phase", at(binding, "/status/phase")},
                  {"deleting", deleting(binding)},
                  {"domain", at(binding, "/spec/domain/name")},
                  {"ceiling", at(binding, "/spec/quota/ceiling")},
                  {"requestedQuota", at(binding, "/status/requestedQuota")},
                  {"effectiveQuota", at(binding, "/status/effectiveQuota")},
                  {"usage", at(binding, "/status/usage")},
                  {"hitRate", at(binding, "/status/hitRate")},
                  {"conditions", unhealthyConditions(binding)},
                  {"workloads", workloadsOf(state, binding)}});
}

Json poolNode(const ClusterState& state, const Json& pool, std::set<std::string>& placed) {
  Json bindings = Json::array();
  const std::string name = objectName(pool);
  for (const Json& b : state.bindings) {
    if (stringAt(b, {"spec", "poolRef", "name"}) == name) {
      bindings.push_back(bindingNode(state, b));
      placed.insert(objectName(b));
    }
  }
  return compact({{"name", name},
                  {"phase", at(pool, "/status/phase")},
                  {"deleting", deleting(pool)},
                  {"quotaTotal", at(pool, "/spec/quota/total")},
                  {"usage", at(pool, "/status/usage/total")},
                  {"conditions", unhealthyConditions(pool)},
                  {"bindings", bindings}});
}

std::string firstBackend(const Json& pool) {
  const Json backends = at(pool, "/spec/backends");
  return backends.is_array() && !backends.empty() && backends[0].is_string()
             ? backends[0].get<std::string>()
             : std::string();
}

// A figure as written ("8Gi"); a plain byte count ("214748365", how the controllers write a grant
// that is no whole unit) for people ("204.8 MiB").
std::string text(const Json& value) {
  if (value.is_number_integer()) {
    return humanBytes(value.get<std::int64_t>());
  }
  if (!value.is_string()) {
    return value.is_null() ? "-" : value.dump();
  }
  const std::string s = value.get<std::string>();
  const bool digits = !s.empty() && s.size() < 19 &&
                      std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  return digits && s != "0" ? humanBytes(std::stoll(s)) : s;
}

// The phase, and "(deleting)" while the object is being deleted.
std::string phaseText(const Json& node) {
  return text(node.value("phase", Json())) + (node.contains("deleting") ? " (deleting)" : "");
}

void appendConditions(std::string& out, const Json& node, const std::string& indent) {
  for (const Json& c : node.value("conditions", Json::array())) {
    // "!" a condition False, "?" one Unknown (not reported yet, or nothing to report).
    out += indent + (c.value("status", std::string()) == "False" ? "! " : "? ") +
           c.value("type", std::string()) + "=" + c.value("status", std::string()) + "/" +
           c.value("reason", std::string());
    const std::string message = c.value("message", std::string());
    out += message.empty() ? "\n" : ": " + message + "\n";
  }
}

// "key value" pairs of the figures a node reports, absent ones left out.
std::string figures(const Json& node,
                    std::initializer_list<std::pair<const char*, const char*>> keys) {
  std::string out;
  for (const auto& [key, label] : keys) {
    if (node.contains(key)) {
      out += "  " + std::string(label) + " " + text(node[key]);
    }
  }
  return out;
}

void appendBinding(std::string& out, const Json& b, const std::string& indent) {
  out += indent + "BINDING " + text(b["name"]) + "  " + phaseText(b) +
         figures(b, {{"domain", "domain"},
                     {"ceiling", "ceiling"},
                     {"requestedQuota", "requested"},
                     {"effectiveQuota", "effective"},
                     {"usage", "usage"},
                     {"hitRate", "hit ratio"}}) +
         "\n";
  appendConditions(out, b, indent + "  ");
  for (const Json& w : b["workloads"]) {
    out += indent + "  " + (w["kind"] == "Pod" ? "POD " : "MD ") + text(w["name"]) + "  " +
           text(w.value("phase", Json())) + figures(w, {{"engine", "engine"}, {"node", "node"}}) +
           "\n";
    appendConditions(out, w, indent + "    ");
  }
}

void appendPool(std::string& out, const Json& p, const std::string& indent) {
  out += indent + "POOL " + text(p["name"]) + "  " + phaseText(p) +
         figures(p, {{"quotaTotal", "total"}, {"usage", "usage"}}) + "\n";
  appendConditions(out, p, indent + "  ");
  for (const Json& b : p["bindings"]) {
    appendBinding(out, b, indent + "  ");
  }
}

}  // namespace

Json statusTreeJson(const ClusterState& state) {
  std::set<std::string> placed_pools;
  std::set<std::string> placed_bindings;
  Json backends = Json::array();
  for (const Json& backend : state.backends) {
    Json pools = Json::array();
    for (const Json& pool : state.pools) {
      if (firstBackend(pool) == objectName(backend)) {
        pools.push_back(poolNode(state, pool, placed_bindings));
        placed_pools.insert(objectName(pool));
      }
    }
    backends.push_back(compact({{"name", objectName(backend)},
                                {"phase", at(backend, "/status/phase")},
                                {"deleting", deleting(backend)},
                                {"capacity", at(backend, "/status/capacity")},
                                {"conditions", unhealthyConditions(backend)},
                                {"pools", pools}}));
  }
  // What hangs from nothing listed: a pool whose backend is gone, a Binding whose pool is.
  Json orphan_pools = Json::array();
  for (const Json& pool : state.pools) {
    if (!placed_pools.contains(objectName(pool))) {
      orphan_pools.push_back(poolNode(state, pool, placed_bindings));
    }
  }
  Json orphan_bindings = Json::array();
  for (const Json& b : state.bindings) {
    if (!placed_bindings.contains(objectName(b))) {
      orphan_bindings.push_back(bindingNode(state, b));
    }
  }
  return Json{{"backends", backends},
              {"poolsWithoutBackend", orphan_pools},
              {"bindingsWithoutPool", orphan_bindings}};
}

std::string statusTreeText(const ClusterState& state) {
  const Json tree = statusTreeJson(state);
  std::string out;
  for (const Json& b : tree["backends"]) {
    const Json capacity = b.value("capacity", Json::object());
    out += "BACKEND " + text(b["name"]) + "  " + phaseText(b) +
           figures(capacity, {{"total", "capacity"}, {"used", "used"}}) + "\n";
    appendConditions(out, b, "  ");
    for (const Json& p : b["pools"]) {
      appendPool(out, p, "  ");
    }
  }
  for (const Json& p : tree["poolsWithoutBackend"]) {
    out += "(no such backend) ";
    appendPool(out, p, "");
  }
  for (const Json& b : tree["bindingsWithoutPool"]) {
    out += "(no such pool) ";
    appendBinding(out, b, "");
  }
  if (out.empty()) {
    out = "No KVCacheBackend, KVCachePool or KVCachePoolBinding.\n";
  }
  return out;
}

}  // namespace kvc::policy
