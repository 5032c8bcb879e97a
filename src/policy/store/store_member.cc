#include "kvc/policy/store/store_member.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "kvc/policy/base/digest.h"
#include "kvc/common/quantity.h"

namespace kvc::policy {
namespace {

Json plain(std::string_view name, std::string value) {
  return {{"name", std::string(name)}, {"value", std::move(value)}};
}

std::string twoDecimals(int percent) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f", percent / 100.0);
  return buf;
}

Result<std::int64_t> bytesOf(const std::string& text, const std::string& field) {
  auto bytes = parseQuantityBytes(text);
  if (!bytes.ok()) {
    return Status(StatusCode::InvalidArgument, field + ": " + bytes.status().message());
  }
  return *bytes;
}

void tierEnv(Json& env, const api::LocalDisk& disk) {
  env.push_back(plain("MOONCAKE_OFFLOAD_ENABLED", "true"));
  env.push_back(plain("MOONCAKE_OFFLOAD_FILE_STORAGE_PATH", disk.path));
  env.push_back(plain("MOONCAKE_OFFLOAD_BUCKET_SIZE_LIMIT_BYTES",
                      std::to_string(kTierBucketSizeLimitBytes)));
  env.push_back(plain("MOONCAKE_OFFLOAD_BUCKET_KEYS_LIMIT", std::to_string(kTierBucketKeysLimit)));
  if (disk.capacity_bytes) {
    env.push_back(plain("MOONCAKE_OFFLOAD_TOTAL_SIZE_LIMIT_BYTES",
                        std::to_string(*disk.capacity_bytes)));
    env.push_back(plain("MOONCAKE_OFFLOAD_BUCKET_MAX_TOTAL_SIZE",
                        std::to_string(*disk.capacity_bytes)));
  }
  if (disk.key_limit) {
    env.push_back(plain("MOONCAKE_OFFLOAD_TOTAL_KEYS_LIMIT", std::to_string(*disk.key_limit)));
  }
  if (!disk.eviction_enabled) {
    env.push_back(plain("MOONCAKE_OFFLOAD_BUCKET_EVICTION_POLICY", "none"));
    env.push_back(plain("MOONCAKE_OFFLOAD_ENABLE_DISK_WATERMARK_EVICTION", "false"));
    return;
  }
  if (disk.eviction_policy) {
    env.push_back(plain("MOONCAKE_OFFLOAD_BUCKET_EVICTION_POLICY",
                        *disk.eviction_policy == "LRU" ? "lru" : "fifo"));
  }
  if (disk.watermark_high && disk.watermark_low) {
    env.push_back(plain("MOONCAKE_OFFLOAD_DISK_EVICTION_HIGH_WATERMARK_RATIO",
                        twoDecimals(*disk.watermark_high)));
    env.push_back(plain("MOONCAKE_OFFLOAD_DISK_EVICTION_LOW_WATERMARK_RATIO",
                        twoDecimals(*disk.watermark_low)));
  }
}

// The declared context over the derived one: the declared fields win, nil ones are filled from
// the derived, and capabilities.add is the sorted union.
Json mergedSecurityContext(const Json& declared, const Json& derived) {
  if (declared.is_null()) {
    return derived;
  }
  Json out = declared;
  for (auto it = derived.begin(); it != derived.end(); ++it) {
    if (!out.contains(it.key()) || out[it.key()].is_null()) {
      out[it.key()] = it.value();
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

// 'text' for sh, each ' written as '\''.
std::string shellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}


// The preStop hook of a tier member: ask the member to unmount the tier gracefully.
Json unmountHook(int port, std::int64_t grace) {
  const std::string script =
      "import json, urllib.request as u; u.urlopen(u.Request('http://127.0.0.1:" +
      std::to_string(port) +
      "/api/unmount_local_disk', data=json.dumps({'grace_period_seconds': " +
      std::to_string(grace) +
      "}).encode(), headers={'Content-Type': 'application/json'}, method='POST'), timeout=" +
      std::to_string(grace + 10) + ")";
  return {{"preStop", {{"exec", {{"command", {"python3", "-c", script}}}}}}};
}

}  // namespace

std::string podSpecHash(const Json& pod_template) {
  Json hashed = pod_template;
  if (hashed.contains("spec")) {
    hashed["spec"].erase("nodeSelector");
  }
  if (auto meta = hashed.find("metadata"); meta != hashed.end() && meta->contains("annotations")) {
    (*meta)["annotations"].erase(std::string(kPodSpecHashAnnotation));
    if ((*meta)["annotations"].empty()) {
      meta->erase("annotations");
    }
  }
  // Json keeps insertion order, and the renderer builds every template in one fixed order, so
  // the same spec always dumps, and hashes, the same.
  return sha256Hex(hashed.dump());
}

Result<Json> memberDaemonSet(const api::KVCacheBackend& backend, int group,
                             const StoreInputs& inputs) {
  const api::MemberGroup& g = backend.spec.members.at(static_cast<std::size_t>(group));
  const std::string& b = backend.metadata.name;
  const std::string at = "spec.connection.managed.members[" + std::to_string(group) + "]";
  KVC_ASSIGN_OR_RETURN(std::string image, storeImage(backend, group, inputs));
  const std::string pull_policy = pullPolicyFor(backend, image);
  const bool elect = electing(backend);
  const int port = kMemberBasePort + group;
  const std::string protocol = groupProtocol(backend, group);
  const bool host_fabric = protocol == "rdma" || protocol == "efa";
  KVC_ASSIGN_OR_RETURN(std::int64_t capacity,
                       bytesOf(g.capacity_per_member, at + ".capacityPerMember"));
  std::int64_t buffer = 0;
  if (g.local_buffer_size) {
    KVC_ASSIGN_OR_RETURN(buffer, bytesOf(*g.local_buffer_size, at + ".localBufferSize"));
  }

  Json args = Json::array({"--", "mc_store_rest_server"});
  if (group > 0) {
    args.push_back("--port");
    args.push_back(std::to_string(port));
  }
  for (const std::string& entry : g.extra_args) {
    args.push_back("-D");
    args.push_back(entry.substr(std::min(entry.find_first_not_of('-'), entry.size())));
  }

  Json env = Json::array();
  env.push_back(plain("MOONCAKE_TE_META_DATA_SERVER", "P2PHANDSHAKE"));
  env.push_back(plain("MOONCAKE_MASTER", memberMasterAddress(backend, inputs)));
  env.push_back(plain("MOONCAKE_PROTOCOL", protocol));
  env.push_back({{"name", "MOONCAKE_LOCAL_HOSTNAME"},
                 {"valueFrom",
                  {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", "status.podIP"}}}}}});
  env.push_back(plain("MC_TE_METRIC", "1"));
  if (g.medium != "VRAM") {
    for (const char* name : {"AMD_VISIBLE_DEVICES", "CAMBRICON_VISIBLE_DEVICES",
                             "IX_VISIBLE_DEVICES", "MTHREADS_VISIBLE_DEVICES",
                             "NVIDIA_VISIBLE_DEVICES"}) {
      env.push_back(plain(name, "void"));
    }
  }
  if (capacity > 0) {
    env.push_back(plain("MOONCAKE_GLOBAL_SEGMENT_SIZE", std::to_string(capacity)));
  }
  if (buffer > 0) {
    env.push_back(plain("MOONCAKE_LOCAL_BUFFER_SIZE", std::to_string(buffer)));
  }
  if (g.local_disk) {
    tierEnv(env, *g.local_disk);
  }
  for (const Json& entry : g.extra_env) {
    env.push_back(entry);
  }

  const std::int64_t memory = g.medium == "VRAM" ? buffer : buffer + capacity;
  Json resources = Json::object();
  if (memory > 0) {
    resources["requests"] = {{"memory", std::to_string(memory)}};
  }
  if (host_fabric) {
    Json limits = Json::object();
    if (protocol == "efa") {
      limits["vpc.amazonaws.com/efa"] = std::to_string(g.fabric_interface_count);
    } else if (g.fabric_interface_count > 1) {
      limits["device.gpustack.ai/rdma"] = std::to_string(g.fabric_interface_count);
    } else {
      limits["device.gpustack.ai/rdma.shared"] = "1";
    }
    resources["limits"] = std::move(limits);
  }

  Json derived_security = Json::object();
  if (host_fabric) {
    derived_security["capabilities"] = {{"add", {"IPC_LOCK", "SYS_RESOURCE"}}};
  }
  const Json security = mergedSecurityContext(g.security_context, derived_security);

  Json mounts = Json::array();
  Json volumes = Json::array();
  for (std::size_t k = 0; k < g.host_paths.size(); ++k) {
    const Json& hp = g.host_paths[k];
    const std::string name = "host-path-" + std::to_string(k);
    Json host_path = {{"path", hp.value("path", "")}};
    if (hp.contains("type") && hp["type"].is_string()) {
      host_path["type"] = hp["type"];
    }
    volumes.push_back({{"name", name}, {"hostPath", std::move(host_path)}});
    Json mount = {{"name", name}, {"mountPath", hp.value("mountPath", "")}};
    if (hp.value("readOnly", false)) {
      mount["readOnly"] = true;
    }
    mounts.push_back(std::move(mount));
  }

  Json container = {{"name", "member"},
                    {"image", image},
                    {"imagePullPolicy", pull_policy},
                    {"command", {"kvcache", "store", "member"}},
                    {"args", std::move(args)},
                    {"env", std::move(env)},
                    {"readinessProbe",
                     {{"tcpSocket", {{"port", port}}}, {"periodSeconds", 5},
                      {"failureThreshold", 3}}},
                    {"terminationMessagePolicy", "FallbackToLogsOnError"}};
  if (!resources.empty()) {
    container["resources"] = std::move(resources);
  }
  if (!security.empty()) {
    container["securityContext"] = security;
  }

  Json pod_spec = Json::object();
  pod_spec["nodeSelector"] = g.node_selector;
  std::int64_t grace = 60;
  Json init = Json::array();
  if (g.local_disk) {
    const std::int64_t unmount_grace = backend.spec.scale_in_grace_period_seconds.value_or(0);
    grace = unmount_grace + 60;
    volumes.push_back(
        {{"name", "local-disk"}, {"hostPath", {{"path", g.local_disk->path}, {"type", "Directory"}}}});
    mounts.push_back({{"name", "local-disk"}, {"mountPath", g.local_disk->path}});
    container["lifecycle"] = unmountHook(port, unmount_grace);
    init.push_back({{"name", "local-disk-survey"},
                    {"image", image},
                    {"imagePullPolicy", pull_policy},
                    // Through `sh -c`, as the seed's Troubleshooting says (the image needs a shell).
                    {"command", {"sh", "-c"}},
                    {"args", {"exec kvcache store survey --path " + shellQuote(g.local_disk->path)}},
                    {"terminationMessagePolicy", "File"},
                    {"volumeMounts", {{{"name", "local-disk"}, {"mountPath", g.local_disk->path}}}}});
  }
  if (!mounts.empty()) {
    container["volumeMounts"] = std::move(mounts);
  }
  pod_spec["terminationGracePeriodSeconds"] = grace;
  pod_spec["dnsPolicy"] = host_fabric ? "ClusterFirstWithHostNet" : "ClusterFirst";
  if (host_fabric) {
    pod_spec["hostNetwork"] = true;
  }
  pod_spec["automountServiceAccountToken"] = elect;
  pod_spec["serviceAccountName"] = elect ? memberName(b) : std::string(kUnelectedServiceAccount);
  if (!backend.spec.image_pull_secrets.empty()) {
    pod_spec["imagePullSecrets"] = pullSecrets(backend);
  }
  if (g.runtime_class_name) {
    pod_spec["runtimeClassName"] = *g.runtime_class_name;
  }
  if (!init.empty()) {
    pod_spec["initContainers"] = std::move(init);
  }
  pod_spec["containers"] = Json::array({std::move(container)});
  if (!volumes.empty()) {
    pod_spec["volumes"] = std::move(volumes);
  }

  const std::string component = memberComponent(group);
  Json pod_template = {{"metadata", {{"labels", objectLabels(b, component)}}},
                       {"spec", std::move(pod_spec)}};
  pod_template["metadata"]["annotations"][std::string(kPodSpecHashAnnotation)] =
      podSpecHash(pod_template);
  return Json{{"apiVersion", "apps/v1"},
              {"kind", "DaemonSet"},
              {"metadata",
               {{"name", memberGroupName(b, group)},
                {"namespace", inputs.namespace_name},
                {"labels", objectLabels(b, component)}}},
              {"spec",
               {{"selector", {{"matchLabels", selectorLabels(b, component)}}},
                {"updateStrategy", {{"type", "OnDelete"}}},
                {"template", std::move(pod_template)}}}};
}

}  // namespace kvc::policy
