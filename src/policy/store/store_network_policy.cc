#include "kvc/policy/store/store_network_policy.h"

#include <charconv>
#include <optional>

#include "kvc/policy/base/workload_labels.h"
#include "kvc/policy/inject/keys.h"

namespace kvc::policy {
namespace {

// The store's defaults (docs/store.md, "Ports"): the transfer engine's P2P handshake and TCP
// data ports, the store client's self-bind range, Linux's ephemeral range.
constexpr PortRange kTransferPorts{15000, 17000};
constexpr PortRange kStoreClientPorts{12300, 14300};
constexpr PortRange kEphemeralPorts{32768, 60999};

bool anyHostFabric(const api::KVCacheBackend& backend) {
  for (std::size_t i = 0; i < backend.spec.members.size(); ++i) {
    if (groupOnHostFabric(backend, static_cast<int>(i))) {
      return true;
    }
  }
  return false;
}

// The port `name` of the group's extraEnv, when it is a plain value in 1–65535.
std::optional<int> envPort(const api::MemberGroup& g, std::string_view name) {
  std::optional<int> found;
  for (const Json& entry : g.extra_env) {
    if (!entry.is_object() || entry.value("name", std::string()) != name) {
      continue;
    }
    const Json& value = entry.contains("value") ? entry["value"] : Json();
    if (!value.is_string()) {
      found.reset();  // valueFrom: not known until the Pod runs
      continue;
    }
    const std::string& text = value.get_ref<const std::string&>();
    int port = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
    found = error == std::errc() && end == text.data() + text.size() && port >= 1 && port <= 65535
                ? std::optional<int>(port)
                : std::nullopt;
  }
  return found;
}

// The range the variables `min_name`..`max_name` set, else `fallback`; each end defaults alone,
// as the store reads them.
PortRange envRange(const api::MemberGroup& g, std::string_view min_name, std::string_view max_name,
                   PortRange fallback) {
  const PortRange range{envPort(g, min_name).value_or(fallback.start),
                        envPort(g, max_name).value_or(fallback.end)};
  return range.start <= range.end ? range : fallback;
}

Json portEntry(PortRange range) {
  Json entry = {{"protocol", "TCP"}, {"port", range.start}};
  if (range.end != range.start) {
    entry["endPort"] = range.end;
  }
  return entry;
}

Json portList(const std::vector<PortRange>& ranges) {
  Json ports = Json::array();
  for (const PortRange& range : ranges) {
    ports.push_back(portEntry(range));
  }
  return ports;
}

// The store's clients, wherever they run: Pods that opted in, and ModelDeployment role Pods.
Json clientPeers() {
  return Json::array({{{"namespaceSelector", Json::object()},
                       {"podSelector", {{"matchLabels", {{std::string(kLabelInject), "true"}}}}}},
                      {{"namespaceSelector", Json::object()},
                       {"podSelector",
                        {{"matchLabels",
                          {{"app.kubernetes.io/name", std::string(kModelDeploymentAppName)},
                           {"app.kubernetes.io/part-of", std::string(kPartOfWorker)}}}}}}});
}

// The backend's own Pods (its members, and the leader's replicas), in the policy's namespace.
Json ownPeer(std::string_view backend) {
  return {{"podSelector",
           {{"matchLabels",
             {{"app.kubernetes.io/name", "kv-cache-backend"},
              {"app.kubernetes.io/instance", std::string(backend)}}}}}};
}

Json operatorPeer() {
  return {{"podSelector",
           {{"matchLabels", {{"app.kubernetes.io/name", std::string(kOperatorAppName)}}}}}};
}

Json policy(const std::string& name, const std::string& component, const std::string& backend,
            const StoreInputs& inputs, Json ingress) {
  return {{"apiVersion", "networking.k8s.io/v1"},
          {"kind", "NetworkPolicy"},
          {"metadata",
           {{"name", name},
            {"namespace", inputs.namespace_name},
            {"labels", objectLabels(backend, component)}}},
          {"spec",
           {{"podSelector", {{"matchLabels", selectorLabels(backend, component)}}},
            {"policyTypes", {"Ingress"}},
            {"ingress", std::move(ingress)}}}};
}

Json leaderPolicy(const api::KVCacheBackend& backend, const StoreInputs& inputs) {
  const std::string& b = backend.metadata.name;
  Json rpc = {{"ports", portList({{kMasterRpcPort, kMasterRpcPort}})}};
  if (!anyHostFabric(backend)) {
    Json from = clientPeers();
    from.push_back(ownPeer(b));
    from.push_back(operatorPeer());
    rpc["from"] = std::move(from);
  }
  Json admin = {{"ports", portList({{kMasterAdminPort, kMasterAdminPort}})},
                {"from", Json::array({operatorPeer()})}};
  return policy(leaderName(b), leaderComponent(), b, inputs,
                Json::array({std::move(rpc), std::move(admin)}));
}

}  // namespace

std::vector<PortRange> memberTransferPorts(const api::KVCacheBackend& backend, int group) {
  const api::MemberGroup& g = backend.spec.members.at(static_cast<std::size_t>(group));
  std::vector<PortRange> ranges = {
      envRange(g, "MC_MIN_RPC_PORT", "MC_MAX_RPC_PORT", kTransferPorts),
      envRange(g, "MC_STORE_CLIENT_MIN_PORT", "MC_STORE_CLIENT_MAX_PORT", kStoreClientPorts)};
  if (g.local_disk) {
    ranges.push_back(kEphemeralPorts);
  }
  return ranges;
}

std::vector<RenderedObject> storeNetworkPolicies(const api::KVCacheBackend& backend,
                                                 const StoreInputs& inputs) {
  const std::string& b = backend.metadata.name;
  std::vector<RenderedObject> out = {{leaderPolicy(backend, inputs), "leader", std::nullopt}};
  for (std::size_t i = 0; i < backend.spec.members.size(); ++i) {
    const int group = static_cast<int>(i);
    if (groupOnHostFabric(backend, group)) {
      continue;
    }
    Json from = clientPeers();
    from.push_back(ownPeer(b));
    Json ingress = Json::array(
        {{{"ports", portList(memberTransferPorts(backend, group))}, {"from", std::move(from)}}});
    out.push_back(
        {policy(memberGroupName(b, group), memberComponent(group), b, inputs, std::move(ingress)),
         "member", group});
  }
  return out;
}

}  // namespace kvc::policy
