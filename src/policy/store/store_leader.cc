#include "kvc/policy/store/store_leader.h"

#include <limits>

#include "kvc/policy/quota/tenant_quota_policy.h"
#include "kvc/policy/store/admin_access.h"
#include "kvc/policy/store/pod_hardening.h"
#include "kvc/policy/store/store_credentials.h"

namespace kvc::policy {
namespace {

bool anyDiskTier(const api::KVCacheBackend& backend) {
  for (const api::MemberGroup& group : backend.spec.members) {
    if (group.local_disk) {
      return true;
    }
  }
  return false;
}

Json fieldEnv(std::string_view name, std::string_view path) {
  return {{"name", std::string(name)},
          {"valueFrom", {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", std::string(path)}}}}}};
}

Json meta(std::string name, const std::string& namespace_name, Json labels) {
  return {{"name", std::move(name)}, {"namespace", namespace_name}, {"labels", std::move(labels)}};
}

// The init container that puts the policy where the master may rewrite it (contract §3.2): the
// seed ConfigMap's document when it exists, else the empty ledger.
Json seedPolicyContainer(const std::string& image, const std::string& pull_policy) {
  const std::string file = std::string(kPolicyMountDir) + "/" + std::string(kTenantQuotaPolicyKey);
  const std::string seed = std::string(kPolicySeedDir) + "/" + std::string(kTenantQuotaPolicyKey);
  return {{"name", "seed-tenant-quota-policy"},
          {"image", image},
          {"imagePullPolicy", pull_policy},
          {"command", {"sh", "-c"}},
          {"args",
           {"if [ -f \"$POLICY_SEED\" ]; then cp \"$POLICY_SEED\" \"$POLICY_FILE\"; "
            "else printf '%s\\n' \"$POLICY_EMPTY\" > \"$POLICY_FILE\"; fi"}},
          {"env",
           {{{"name", "POLICY_SEED"}, {"value", seed}},
            {{"name", "POLICY_FILE"}, {"value", file}},
            {{"name", "POLICY_EMPTY"}, {"value", "version: 1\ntenants: []"}}}},
          {"terminationMessagePolicy", "FallbackToLogsOnError"},
          {"securityContext", restrictedContainerSecurityContext()},
          {"volumeMounts",
           {{{"name", "tenant-quota-policy"}, {"mountPath", std::string(kPolicyMountDir)}},
            {{"name", "tenant-quota-policy-seed"},
             {"mountPath", std::string(kPolicySeedDir) + "/"},
             {"readOnly", true}}}}};
}

}  // namespace

std::vector<std::string> masterArguments(const api::KVCacheBackend& backend, bool launched) {
  std::vector<std::string> args = {"-rpc_port=" + std::to_string(kMasterRpcPort)};
  if (launched) {
    // The admin listener on the Pod's loopback only: the launcher serves the admin port (9003)
    // over mutual TLS in front of it (admin_access.h).
    args.push_back("-metrics_port=" + std::to_string(kMasterLoopbackAdminPort));
    args.push_back("-metrics_host=" + std::string(kMasterLoopbackHost));
  } else {
    // A published image's master serves the admin port itself (and may predate -metrics_host).
    args.push_back("-metrics_port=" + std::to_string(kMasterAdminPort));
  }
  args.emplace_back("-default_kv_lease_ttl=5m");
  args.push_back(
      std::string("-allocation_strategy=") +
      (backend.spec.leader.allocation_strategy == "Random" ? "random" : "free_ratio_first"));
  if (backend.spec.multi_tenancy) {
    args.emplace_back("-enable_multi_tenants=true");
    args.push_back("-tenant_quota_connector_uri=" + std::string(kPolicyMountDir) + "/" +
                   std::string(kTenantQuotaPolicyKey));
  }
  if (anyDiskTier(backend)) {
    args.emplace_back("-enable_offload=true");
    args.emplace_back("-offload_on_evict=true");
  }
  args.insert(args.end(), backend.spec.leader.extra_args.begin(),
              backend.spec.leader.extra_args.end());
  return args;
}

std::int64_t leaderReplicasNow(const api::KVCacheBackend& backend, const StoreInputs& inputs,
                               const Json& live) {
  if (!elects(backend, inputs) || backend.spec.leader.replicas <= 1) {
    return 1;
  }
  if (!live.is_object()) {
    return 1;  // the first Pod is created alone; standbys join once it runs
  }
  // The live template elects when the launcher got a Lease.
  bool live_elects = false;
  const Json containers =
      live.value(Json::json_pointer("/spec/template/spec/containers"), Json::array());
  for (const Json& c : containers) {
    for (const Json& arg : c.value("args", Json::array())) {
      if (arg.is_string() && arg.get<std::string>().rfind("--lease=", 0) == 0) {
        live_elects = true;
      }
    }
  }
  const std::int64_t generation = live.value(Json::json_pointer("/metadata/generation"), 0);
  const Json& status = live.value("status", Json::object());
  const bool observed = status.value("observedGeneration", std::int64_t{0}) >= generation;
  const std::int64_t current = live.value(Json::json_pointer("/spec/replicas"), std::int64_t{1});
  const bool rolled_out = status.value("updatedReplicas", std::int64_t{0}) >= current &&
                          status.value("replicas", std::int64_t{0}) <= current;
  if (live_elects && observed && rolled_out) {
    return backend.spec.leader.replicas;
  }
  // Already risen: never step back down while the template is the same.
  return live_elects && current > 1 ? current : 1;
}

namespace {

// The launcher's arguments: the Lease and its timing (when electing), its listeners, then the
// master's command line after `--`.
Json leaderArgs(const api::KVCacheBackend& backend, const StoreInputs& inputs, bool elect) {
  Json args = Json::array();
  if (elect) {
    args.push_back("--lease=" + inputs.namespace_name + "/" + leaderName(backend.metadata.name));
    for (std::string& arg : leaderTimingArgs(leaderTiming(inputs.leader_lease))) {
      args.push_back(std::move(arg));
    }
    // A standby's master starts from the ledger as the operator last wrote it, not from the copy
    // its init container took when the Pod started.
    if (backend.spec.multi_tenancy) {
      args.push_back("--policy-configmap=" + inputs.namespace_name + "/" +
                     tenantQuotaPolicyName(backend.metadata.name));
    }
  }
  args.push_back("--health-address=:" + std::to_string(kLeaderLauncherPort));
  args.push_back("--admin-address=:" + std::to_string(kMasterAdminPort));
  args.push_back("--admin-tls-dir=" + std::string(kAdminTlsMountDir));
  args.push_back("--admin-upstream=" + std::string(kMasterLoopbackHost) + ":" +
                 std::to_string(kMasterLoopbackAdminPort));
  args.push_back("--");
  args.push_back("mooncake_master");
  for (const std::string& arg : masterArguments(backend, true)) {
    args.push_back(arg);
  }
  return args;
}

// The container of this project's image: `kvcache store leader` in front of the master.
Json launchedLeaderContainer(const api::KVCacheBackend& backend, const StoreInputs& inputs,
                             bool elect) {
  Json env = Json::array();
  if (elect) {
    env.push_back(fieldEnv("KUBERNETES_POD_NAME", "metadata.name"));
    env.push_back(fieldEnv("KUBERNETES_POD_NAMESPACE", "metadata.namespace"));
    env.push_back(fieldEnv("KUBERNETES_POD_IP", "status.podIP"));
  }
  return {
      {"command", {"kvcache", "store", "leader"}},
      {"args", leaderArgs(backend, inputs, elect)},
      {"env", std::move(env)},
      {"ports",
       {{{"name", "rpc"}, {"containerPort", kMasterRpcPort}, {"protocol", "TCP"}},
        {{"name", "admin"}, {"containerPort", kMasterAdminPort}, {"protocol", "TCP"}},
        {{"name", "launcher"}, {"containerPort", kLeaderLauncherPort}, {"protocol", "TCP"}}}},
      // Probed every second: a standby that has just won must enter the Service at once (members
      // and clients reach the master only through it), and the failover budget is the Lease
      // duration + 5 s. Five misses in a row take a serving leader out. The launcher answers
      // with the master's own /get_all_segments (503 until it is the active leader): the admin
      // port asks the kubelet for a client certificate it does not have.
      {"readinessProbe",
       {{"httpGet", {{"path", "/readyz"}, {"port", "launcher"}}},
        {"periodSeconds", kLeaderReadinessPeriodSeconds},
        {"failureThreshold", 5}}},
      {"livenessProbe",
       {{"httpGet", {{"path", "/healthz"}, {"port", "launcher"}}},
        {"periodSeconds", 10},
        {"failureThreshold", 6}}},
  };
}

// The container of a published upstream image: the master itself, probed on its own admin port
// as the contract has it (readiness /get_all_segments, liveness /health), no election.
Json publishedLeaderContainer(const api::KVCacheBackend& backend) {
  Json command = {"mooncake_master"};
  Json args = Json::array();
  for (const std::string& arg : masterArguments(backend, false)) {
    args.push_back(arg);
  }
  return {
      {"command", std::move(command)},
      {"args", std::move(args)},
      {"env", Json::array()},
      {"ports",
       {{{"name", "rpc"}, {"containerPort", kMasterRpcPort}, {"protocol", "TCP"}},
        {{"name", "admin"}, {"containerPort", kMasterAdminPort}, {"protocol", "TCP"}}}},
      {"readinessProbe",
       {{"httpGet", {{"path", "/get_all_segments"}, {"port", "admin"}}},
        {"periodSeconds", kLeaderReadinessPeriodSeconds},
        {"failureThreshold", 5}}},
      {"livenessProbe",
       {{"httpGet", {{"path", "/health"}, {"port", "admin"}}},
        {"periodSeconds", 10},
        {"failureThreshold", 6}}},
  };
}

// The leader container in the key order of every rendered template (the order is compared).
Json leaderContainer(const api::KVCacheBackend& backend, const StoreInputs& inputs, bool launched,
                     bool elect, const std::string& image, const std::string& pull_policy) {
  Json parts = launched ? launchedLeaderContainer(backend, inputs, elect)
                        : publishedLeaderContainer(backend);
  Json env = std::move(parts["env"]);
  for (const Json& entry : backend.spec.leader.extra_env) {
    env.push_back(entry);
  }
  Json container = {
      {"name", "leader"},
      {"image", image},
      {"imagePullPolicy", pull_policy},
      {"command", std::move(parts["command"])},
      {"args", std::move(parts["args"])},
      {"ports", std::move(parts["ports"])},
      {"readinessProbe", std::move(parts["readinessProbe"])},
      {"livenessProbe", std::move(parts["livenessProbe"])},
      {"terminationMessagePolicy", "FallbackToLogsOnError"},
      {"securityContext", restrictedContainerSecurityContext()},
  };
  if (!env.empty()) {
    container["env"] = std::move(env);
  }
  return container;
}

}  // namespace

Result<Json> leaderDeployment(const api::KVCacheBackend& backend, const StoreInputs& inputs,
                              std::int64_t replicas) {
  const std::string& b = backend.metadata.name;
  KVC_ASSIGN_OR_RETURN(std::string image, storeImage(backend, std::nullopt, inputs));
  const std::string pull_policy = pullPolicyFor(backend, image);
  const bool launched = leaderLaunched(backend, inputs);
  const bool elect = elects(backend, inputs);
  if (!elect) {
    replicas = 1;  // no election (electionBackend None, or an image that cannot run one): one
  }
  Json container = leaderContainer(backend, inputs, launched, elect, image, pull_policy);

  Json pod_spec = {{"securityContext", leaderPodSecurityContext()}, {"containers", Json::array()}};
  if (elect) {
    pod_spec["serviceAccountName"] = leaderName(b);
    pod_spec["automountServiceAccountToken"] = true;
  } else {
    pod_spec["serviceAccountName"] = std::string(kUnelectedServiceAccount);
    pod_spec["automountServiceAccountToken"] = false;
  }
  if (!backend.spec.image_pull_secrets.empty()) {
    pod_spec["imagePullSecrets"] = pullSecrets(backend);
  }
  // The admin port's certificate and the CA of its clients (never the CA's key), for the
  // launcher: a published image's master serves its admin port without TLS.
  Json mounts = Json::array();
  Json volumes = Json::array();
  if (launched) {
    mounts.push_back(
        {{"name", "admin-tls"}, {"mountPath", std::string(kAdminTlsMountDir)}, {"readOnly", true}});
    volumes.push_back({{"name", "admin-tls"},
                       {"secret",
                        {{"secretName", std::string(kStoreAdminTlsSecret)},
                         {"items",
                          {{{"key", "tls.crt"}, {"path", "tls.crt"}},
                           {{"key", "tls.key"}, {"path", "tls.key"}},
                           {{"key", "ca.crt"}, {"path", "ca.crt"}}}},
                         {"defaultMode", 0444}}}});
  }
  if (backend.spec.multi_tenancy) {
    mounts.push_back(
        {{"name", "tenant-quota-policy"}, {"mountPath", std::string(kPolicyMountDir)}});
    pod_spec["initContainers"] = {seedPolicyContainer(image, pull_policy)};
    volumes.push_back({{"name", "tenant-quota-policy"}, {"emptyDir", Json::object()}});
    volumes.push_back(
        {{"name", "tenant-quota-policy-seed"},
         {"configMap",
          {{"name", tenantQuotaPolicyName(b)}, {"optional", true}, {"defaultMode", 0644}}}});
  }
  if (!mounts.empty()) {
    container["volumeMounts"] = std::move(mounts);
    pod_spec["volumes"] = std::move(volumes);
  }
  pod_spec["containers"].push_back(std::move(container));

  Json spec = {{"replicas", replicas},
               {"selector", {{"matchLabels", selectorLabels(b, leaderComponent())}}},
               {"template",
                {{"metadata", {{"labels", objectLabels(b, leaderComponent())}}},
                 {"spec", std::move(pod_spec)}}}};
  if (replicas > 1) {
    spec["strategy"] = {{"type", "RollingUpdate"},
                        {"rollingUpdate", {{"maxSurge", 1}, {"maxUnavailable", replicas}}}};
    // Standbys are never ready, so a deadline would always pass: disable it.
    spec["progressDeadlineSeconds"] = std::numeric_limits<std::int32_t>::max();
  } else {
    spec["strategy"] = {{"type", "Recreate"}};
  }
  return Json{
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", meta(leaderName(b), inputs.namespace_name, objectLabels(b, leaderComponent()))},
      {"spec", std::move(spec)}};
}

Json leaderService(const api::KVCacheBackend& backend, const StoreInputs& inputs) {
  const std::string& b = backend.metadata.name;
  return {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", meta(leaderName(b), inputs.namespace_name, objectLabels(b, leaderComponent()))},
      {"spec",
       {{"type", "ClusterIP"},
        {"selector", selectorLabels(b, leaderComponent())},
        {"publishNotReadyAddresses", false},
        {"ports",
         {{{"name", "rpc"}, {"port", kMasterRpcPort}, {"targetPort", "rpc"}, {"protocol", "TCP"}},
          {{"name", "admin"},
           {"port", kMasterAdminPort},
           {"targetPort", "admin"},
           {"protocol", "TCP"}}}}}}};
}

std::vector<RenderedObject> electionRbac(const api::KVCacheBackend& backend,
                                         const StoreInputs& inputs) {
  std::vector<RenderedObject> out;
  if (!elects(backend, inputs)) {
    return out;
  }
  const std::string& b = backend.metadata.name;
  const struct {
    std::string name;
    std::string role;
    Json rules;
  } k_accounts[] = {
      // The launcher creates its Lease (a create cannot be limited to a name), then reads,
      // renews and watches that one Lease only: never another backend's, nor the operator's
      // own `kvcache-operator` beside it.
      {leaderName(b),
       "leader",
       {{{"apiGroups", {"coordination.k8s.io"}}, {"resources", {"leases"}}, {"verbs", {"create"}}},
        {{"apiGroups", {"coordination.k8s.io"}},
         {"resources", {"leases"}},
         {"resourceNames", {leaderName(b)}},
         {"verbs", {"get", "update", "watch"}}},
        // The launcher labels its own Pod mooncake.io/store-role=leader.
        {{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"patch"}}},
        // On winning the Lease it reads the backend's tenant-quota policy (--policy-configmap).
        {{"apiGroups", {""}},
         {"resources", {"configmaps"}},
         {"resourceNames", {tenantQuotaPolicyName(b)}},
         {"verbs", {"get"}}}}},
      // A member reads the holder: with Lease addressing for the address the holder published
      // on it, with Service addressing (--follow-lease) for the moment the master moves.
      {memberName(b),
       "member",
       {{{"apiGroups", {"coordination.k8s.io"}},
         {"resources", {"leases"}},
         {"resourceNames", {leaderName(b)}},
         {"verbs", {"get"}}}}},
  };
  for (const auto& account : k_accounts) {
    const Json labels = objectLabels(b, account.role);
    out.push_back({{{"apiVersion", "v1"},
                    {"kind", "ServiceAccount"},
                    {"metadata", meta(account.name, inputs.namespace_name, labels)}},
                   account.role,
                   std::nullopt});
    out.push_back({{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                    {"kind", "Role"},
                    {"metadata", meta(account.name, inputs.namespace_name, labels)},
                    {"rules", account.rules}},
                   account.role,
                   std::nullopt});
    out.push_back(
        {{{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "RoleBinding"},
          {"metadata", meta(account.name, inputs.namespace_name, labels)},
          {"roleRef",
           {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", account.name}}},
          {"subjects",
           {{{"kind", "ServiceAccount"},
             {"name", account.name},
             {"namespace", inputs.namespace_name}}}}},
         account.role,
         std::nullopt});
  }
  return out;
}

}  // namespace kvc::policy
