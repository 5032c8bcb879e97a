#include "kvc/policy/store/tier_cleanup.h"

#include "kvc/policy/base/count_pair.h"
#include "kvc/policy/base/digest.h"
#include "kvc/policy/store/pod_hardening.h"

namespace kvc::policy {
namespace {

std::string trimmedPath(std::string_view path) {
  std::string out(path);
  while (out.size() > 1 && out.back() == '/') {
    out.pop_back();
  }
  return out;
}

}  // namespace

std::string formatTierCleanup(const TierCleanupResult& result) {
  return formatCountPair("removed", result.removed, "remaining", result.remaining);
}

std::optional<TierCleanupResult> parseTierCleanup(std::string_view message) {
  auto counts = parseCountPair(message, "removed", "remaining");
  if (!counts) {
    return std::nullopt;
  }
  return TierCleanupResult{counts->first, counts->second};
}

std::string tierCleanupComponent(int group) { return "tier-clean-" + std::to_string(group); }

Result<Json> tierCleanupPod(const api::KVCacheBackend& backend, int group, std::string_view node,
                            const StoreInputs& inputs) {
  const api::MemberGroup& spec = backend.spec.members.at(static_cast<std::size_t>(group));
  if (!spec.local_disk) {
    return Status(StatusCode::InvalidArgument,
                  "group " + std::to_string(group) + " has no disk tier to clean");
  }
  KVC_ASSIGN_OR_RETURN(std::string image, storeImage(backend, group, inputs));
  const std::string& path = spec.local_disk->path;
  // Pod names are DNS subdomains; the node's name is hashed so any node name fits.
  const std::string name = backend.metadata.name + "-" + tierCleanupComponent(group) + "-" +
                           sha256Hex(node).substr(0, 10);
  Json container = {
      {"name", "clean"},
      {"image", image},
      {"imagePullPolicy", pullPolicyFor(backend, image)},
      {"command", {"kvcache", "store", "clean", "--path", path}},
      {"terminationMessagePolicy", "File"},
      // As the member's user: the files to remove are the member's.
      {"securityContext", hardenedContainerSecurityContext(spec.security_context, Json::object())},
      {"volumeMounts", {{{"name", "local-disk"}, {"mountPath", path}}}}};
  Json pod_spec = {
      {"nodeName", std::string(node)},
      {"securityContext", memberPodSecurityContext(spec.security_context)},
      {"restartPolicy", "Never"},
      {"activeDeadlineSeconds", kTierCleanupDeadlineSeconds},
      {"automountServiceAccountToken", false},
      {"containers", {container}},
      {"volumes",
       {{{"name", "local-disk"}, {"hostPath", {{"path", path}, {"type", "Directory"}}}}}}};
  if (!backend.spec.image_pull_secrets.empty()) {
    pod_spec["imagePullSecrets"] = pullSecrets(backend);
  }
  if (spec.runtime_class_name) {
    pod_spec["runtimeClassName"] = *spec.runtime_class_name;
  }
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"namespace", inputs.namespace_name},
                {"labels", objectLabels(backend.metadata.name, tierCleanupComponent(group))}}},
              {"spec", std::move(pod_spec)}};
}

bool tierPathsOverlap(std::string_view a, std::string_view b) {
  const std::string x = trimmedPath(a);
  const std::string y = trimmedPath(b);
  const std::string& shorter = x.size() <= y.size() ? x : y;
  const std::string& longer = x.size() <= y.size() ? y : x;
  if (longer.compare(0, shorter.size(), shorter) != 0) {
    return false;
  }
  return longer.size() == shorter.size() || shorter == "/" || longer[shorter.size()] == '/';
}

std::string nodeSelectorQuery(const api::MemberGroup& group) {
  std::string out;
  if (!group.node_selector.is_object()) {
    return out;
  }
  for (const auto& [key, value] : group.node_selector.items()) {
    if (!out.empty()) {
      out += ",";
    }
    out += key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

}  // namespace kvc::policy
