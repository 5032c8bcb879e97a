#include "kvc/policy/store/pod_hardening.h"

#include <set>
#include <string>
#include <vector>

namespace kvc::policy {
namespace {

Json runtimeDefaultSeccomp() { return {{"type", "RuntimeDefault"}}; }

bool addsCapability(const Json& context, std::string_view capability) {
  for (const Json& cap : context.value(Json::json_pointer("/capabilities/add"), Json::array())) {
    if (cap.is_string()) {
      std::string name = cap.get<std::string>();
      if (name == capability || name == "CAP_" + std::string(capability)) {
        return true;
      }
    }
  }
  return false;
}

// A declared uid 0 or runAsNonRoot: false: the group's files belong to root.
bool declaresRoot(const Json& declared) {
  if (!declared.is_object()) {
    return false;
  }
  const Json user = declared.value("runAsUser", Json());
  const Json non_root = declared.value("runAsNonRoot", Json());
  return (user.is_number_integer() && user.get<std::int64_t>() == 0) ||
         (non_root.is_boolean() && !non_root.get<bool>());
}

}  // namespace

Json leaderPodSecurityContext() {
  return {{"runAsNonRoot", true},
          {"runAsUser", kStoreImageUser},
          {"runAsGroup", kStoreImageUser},
          {"seccompProfile", runtimeDefaultSeccomp()}};
}

Json restrictedContainerSecurityContext() {
  return {{"allowPrivilegeEscalation", false},
          {"capabilities", {{"drop", {"ALL"}}}},
          {"readOnlyRootFilesystem", true}};
}

Json memberPodSecurityContext(const Json& declared) {
  Json out = {{"seccompProfile", runtimeDefaultSeccomp()}};
  if (!declaresRoot(declared)) {
    out["runAsNonRoot"] = true;
  }
  return out;
}

Json mergedSecurityContext(const Json& declared, const Json& derived) {
  if (!declared.is_object()) {
    return derived;
  }
  Json out = declared;
  for (auto it = derived.begin(); it != derived.end(); ++it) {
    if (!out.contains(it.key()) || out[it.key()].is_null()) {
      out[it.key()] = it.value();
    } else if (it.key() == "capabilities" && out[it.key()].is_object() && it->is_object()) {
      // One level deeper for capabilities: a declared add does not lose the derived drop.
      for (auto cap = it->begin(); cap != it->end(); ++cap) {
        if (!out[it.key()].contains(cap.key())) {
          out[it.key()][cap.key()] = cap.value();
        }
      }
    }
  }
  std::set<std::string> add;
  for (const Json* from : {&declared, &derived}) {
    const Json caps = from->value(Json::json_pointer("/capabilities/add"), Json::array());
    for (const Json& cap : caps) {
      if (cap.is_string()) {
        add.insert(cap.get<std::string>());
      }
    }
  }
  if (!add.empty()) {
    out["capabilities"]["add"] = Json(std::vector<std::string>(add.begin(), add.end()));
  }
  return out;
}

Json hardenedContainerSecurityContext(const Json& declared, const Json& derived) {
  Json defaults = mergedSecurityContext(restrictedContainerSecurityContext(), derived);
  Json out = mergedSecurityContext(declared, defaults);
  const bool privileged = out.value("privileged", false);
  if ((privileged || addsCapability(out, "SYS_ADMIN")) &&
      !(declared.is_object() && declared.contains("allowPrivilegeEscalation"))) {
    out.erase("allowPrivilegeEscalation");
  }
  return out;
}

}  // namespace kvc::policy
