#include "kvc/policy/store/store_member.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "kvc/common/quantity.h"
#include "kvc/policy/base/digest.h"
#include "kvc/policy/store/pod_hardening.h"

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
  env.push_back(
      plain("MOONCAKE_OFFLOAD_BUCKET_SIZE_LIMIT_BYTES", std::to_string(kTierBucketSizeLimitBytes)));
  env.push_back(plain("MOONCAKE_OFFLOAD_BUCKET_KEYS_LIMIT", std::to_string(kTierBucketKeysLimit)));
  if (disk.capacity_bytes) {
    env.push_back(
        plain("MOONCAKE_OFFLOAD_TOTAL_SIZE_LIMIT_BYTES", std::to_string(*disk.capacity_bytes)));
    env.push_back(
        plain("MOONCAKE_OFFLOAD_BUCKET_MAX_TOTAL_SIZE", std::to_string(*disk.capacity_bytes)));
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
      std::to_string(port) + "/api/unmount_local_disk', data=json.dumps({'grace_period_seconds': " +
      std::to_string(grace) +
      "}).encode(), headers={'Content-Type': 'application/json'}, method='POST'), timeout=" +
      std::to_string(grace + 10) + ")";
  return {{"preStop", {{"exec", {{"command", {"python3", "-c", script}}}}}}};
}

// What a group's member is rendered from, derived once: the image, the port, the transport,
// and the sizes (whose parse errors name the field).
struct MemberSettings {
  std::string image;
  std::string pull_policy;
  // The image is this project's build: `kvcache store member` runs the member (store_image.h).
  bool launched = true;
  // The disk tier's survey is `kvcache store survey`: from the member's image when that is ours,
  // else from the Setting's (this project's build).
  std::string survey_image;
  std::string survey_pull_policy;
  int group = 0;
  int port = 0;
  std::string protocol;
  bool host_fabric = false;  // rdma or efa: the Pod needs the host's network and devices
  std::int64_t capacity = 0;
  std::int64_t buffer = 0;  // 0 without localBufferSize
};

Result<MemberSettings> memberSettings(const api::KVCacheBackend& backend, int group,
                                      const StoreInputs& inputs) {
  const api::MemberGroup& g = backend.spec.members.at(static_cast<std::size_t>(group));
  const std::string at = "spec.connection.managed.members[" + std::to_string(group) + "]";
  MemberSettings m;
  KVC_ASSIGN_OR_RETURN(m.image, storeImage(backend, group, inputs));
  m.pull_policy = pullPolicyFor(backend, m.image);
  m.launched = memberLaunched(backend, group, inputs);
  m.survey_image = m.launched ? m.image : inputs.settings_image;
  m.survey_pull_policy = pullPolicyFor(backend, m.survey_image);
  m.group = group;
  m.port = kMemberBasePort + group;
  m.protocol = groupProtocol(backend, group);
  m.host_fabric = groupOnHostFabric(backend, group);
  KVC_ASSIGN_OR_RETURN(m.capacity, bytesOf(g.capacity_per_member, at + ".capacityPerMember"));
  if (g.local_buffer_size) {
    KVC_ASSIGN_OR_RETURN(m.buffer, bytesOf(*g.local_buffer_size, at + ".localBufferSize"));
  }
  return m;
}

// The store's own member command line: group i listens on kMemberBasePort + i (the first on the
// store's default, so no flag); extraArgs become -D flags, their leading dashes dropped.
Json storeMemberCommandLine(const api::MemberGroup& g, int group, const MemberSettings& m) {
  Json line = {"mc_store_rest_server"};
  if (group > 0) {
    line.push_back("--port");
    line.push_back(std::to_string(m.port));
  }
  for (const std::string& entry : g.extra_args) {
    line.push_back("-D");
    line.push_back(entry.substr(std::min(entry.find_first_not_of('-'), entry.size())));
  }
  return line;
}

// The member container's command and arguments: `kvcache store member [--follow-lease] -- <the
// store's command line>` on this project's image, the store's command line itself on a published
// one.
std::pair<Json, Json> memberCommand(const api::KVCacheBackend& backend, const api::MemberGroup& g,
                                    int group, const StoreInputs& inputs, const MemberSettings& m) {
  Json line = storeMemberCommandLine(g, group, m);
  if (!m.launched) {
    Json command = {line.front()};
    line.erase(line.begin());
    return {std::move(command), std::move(line)};
  }
  Json args = Json::array();
  // A Service-addressed member of an electing backend follows the Lease all the same: when the
  // holder changes it restarts its member once the Service answers again, rather than waiting
  // out RPCs to a dead master's address (docs/backends.md, Step 4).
  if (elects(backend, inputs) && backend.spec.leader.member_addressing != "Lease") {
    args.push_back("--follow-lease=" + inputs.namespace_name + "/" +
                   leaderName(backend.metadata.name));
  }
  args.push_back("--");
  for (Json& word : line) {
    args.push_back(std::move(word));
  }
  return {Json{"kvcache", "store", "member"}, std::move(args)};
}

// The member's environment, in the contract's order (the hash depends on it): the master and
// transport, the device masks of a host-memory member (so a GPU runtime does not hand it GPUs),
// the sizes, the disk tier, then extraEnv as declared.
Json memberEnv(const api::KVCacheBackend& backend, const api::MemberGroup& g,
               const StoreInputs& inputs, const MemberSettings& m) {
  Json env = Json::array();
  env.push_back(plain("MOONCAKE_TE_META_DATA_SERVER", "P2PHANDSHAKE"));
  env.push_back(plain("MOONCAKE_MASTER", memberMasterAddress(backend, m.group, inputs)));
  env.push_back(plain("MOONCAKE_PROTOCOL", m.protocol));
  env.push_back(
      {{"name", "MOONCAKE_LOCAL_HOSTNAME"},
       {"valueFrom", {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", "status.podIP"}}}}}});
  env.push_back(plain("MC_TE_METRIC", "1"));
  if (g.medium != "VRAM") {
    for (const char* name :
         {"AMD_VISIBLE_DEVICES", "CAMBRICON_VISIBLE_DEVICES", "IX_VISIBLE_DEVICES",
          "MTHREADS_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"}) {
      env.push_back(plain(name, "void"));
    }
  }
  if (m.capacity > 0) {
    env.push_back(plain("MOONCAKE_GLOBAL_SEGMENT_SIZE", std::to_string(m.capacity)));
  }
  if (m.buffer > 0) {
    env.push_back(plain("MOONCAKE_LOCAL_BUFFER_SIZE", std::to_string(m.buffer)));
  }
  if (g.local_disk) {
    tierEnv(env, *g.local_disk);
  }
  for (const Json& entry : g.extra_env) {
    env.push_back(entry);
  }
  return env;
}

// requests.memory is what the member pins in host memory (its segment lives in VRAM for a VRAM
// group, so only the buffer counts); a fabric transport asks the device plugin for its
// interfaces. Empty when neither applies.
Json memberResources(const api::MemberGroup& g, const MemberSettings& m) {
  const std::int64_t memory = g.medium == "VRAM" ? m.buffer : m.buffer + m.capacity;
  Json resources = Json::object();
  if (memory > 0) {
    resources["requests"] = {{"memory", std::to_string(memory)}};
  }
  if (m.host_fabric) {
    Json limits = Json::object();
    if (m.protocol == "efa") {
      limits["vpc.amazonaws.com/efa"] = std::to_string(g.fabric_interface_count);
    } else if (g.fabric_interface_count > 1) {
      limits["device.gpustack.ai/rdma"] = std::to_string(g.fabric_interface_count);
    } else {
      limits["device.gpustack.ai/rdma.shared"] = "1";
    }
    resources["limits"] = std::move(limits);
  }
  return resources;
}

// The declared securityContext, with what a fabric transport needs (pinned memory) added.
Json memberSecurityContext(const api::MemberGroup& g, const MemberSettings& m) {
  Json derived_security = Json::object();
  if (m.host_fabric) {
    derived_security["capabilities"] = {{"add", {"IPC_LOCK", "SYS_RESOURCE"}}};
  }
  return hardenedContainerSecurityContext(g.security_context, derived_security);
}

std::string hostPathVolumeName(std::size_t k) { return "host-path-" + std::to_string(k); }

// The Pod's volumes: the declared hostPaths in order, then the disk tier's directory.
Json memberVolumes(const api::MemberGroup& g) {
  Json volumes = Json::array();
  for (std::size_t k = 0; k < g.host_paths.size(); ++k) {
    const Json& hp = g.host_paths[k];
    Json host_path = {{"path", hp.value("path", "")}};
    if (hp.contains("type") && hp["type"].is_string()) {
      host_path["type"] = hp["type"];
    }
    volumes.push_back({{"name", hostPathVolumeName(k)}, {"hostPath", std::move(host_path)}});
  }
  if (g.local_disk) {
    volumes.push_back({{"name", "local-disk"},
                       {"hostPath", {{"path", g.local_disk->path}, {"type", "Directory"}}}});
  }
  return volumes;
}

// The member container's mounts of memberVolumes(), in the same order.
Json memberMounts(const api::MemberGroup& g) {
  Json mounts = Json::array();
  for (std::size_t k = 0; k < g.host_paths.size(); ++k) {
    const Json& hp = g.host_paths[k];
    Json mount = {{"name", hostPathVolumeName(k)}, {"mountPath", hp.value("mountPath", "")}};
    if (hp.value("readOnly", false)) {
      mount["readOnly"] = true;
    }
    mounts.push_back(std::move(mount));
  }
  if (g.local_disk) {
    mounts.push_back({{"name", "local-disk"}, {"mountPath", g.local_disk->path}});
  }
  return mounts;
}

// How long a tier member may take to unmount its disk tier before it is killed.
std::int64_t unmountGrace(const api::KVCacheBackend& backend) {
  return backend.spec.scale_in_grace_period_seconds.value_or(0);
}

Json memberContainer(const api::KVCacheBackend& backend, const api::MemberGroup& g, int group,
                     const StoreInputs& inputs, const MemberSettings& m) {
  auto [command, args] = memberCommand(backend, g, group, inputs, m);
  Json container = {
      {"name", "member"},
      {"image", m.image},
      {"imagePullPolicy", m.pull_policy},
      {"command", std::move(command)},
      {"args", std::move(args)},
      {"env", memberEnv(backend, g, inputs, m)},
      {"readinessProbe",
       {{"tcpSocket", {{"port", m.port}}}, {"periodSeconds", 5}, {"failureThreshold", 3}}},
      {"terminationMessagePolicy", "FallbackToLogsOnError"}};
  if (Json resources = memberResources(g, m); !resources.empty()) {
    container["resources"] = std::move(resources);
  }
  if (Json security = memberSecurityContext(g, m); !security.empty()) {
    container["securityContext"] = std::move(security);
  }
  if (g.local_disk) {
    container["lifecycle"] = unmountHook(m.port, unmountGrace(backend));
  }
  if (Json mounts = memberMounts(g); !mounts.empty()) {
    container["volumeMounts"] = std::move(mounts);
  }
  return container;
}

// The disk tier's init container: surveys the tier's directory before the member mounts it.
// It runs as the member does (it checks that the member's user can write the directory).
Json localDiskSurvey(const api::LocalDisk& disk, const Json& declared, const MemberSettings& m) {
  return {{"name", "local-disk-survey"},
          {"image", m.survey_image},
          {"imagePullPolicy", m.survey_pull_policy},
          // Through `sh -c`, as the seed's Troubleshooting says (the image needs a shell).
          {"command", {"sh", "-c"}},
          {"args", {"exec kvcache store survey --path " + shellQuote(disk.path)}},
          {"terminationMessagePolicy", "File"},
          {"securityContext", hardenedContainerSecurityContext(declared, Json::object())},
          {"volumeMounts", {{{"name", "local-disk"}, {"mountPath", disk.path}}}}};
}

// The Pod spec, keys in a fixed order (the hash depends on it). A tier member's grace period
// covers its unmount on top of the usual 60 s; a fabric transport runs on the host's network;
// only the members of a backend whose election runs, on this project's image, get a token (they
// resolve the master through the leader's Lease), and the others name kUnelectedServiceAccount
// explicitly (see there).
Json memberPodSpec(const api::KVCacheBackend& backend, const api::MemberGroup& g, int group,
                   const StoreInputs& inputs, const MemberSettings& m) {
  const bool elect = elects(backend, inputs) && m.launched;
  Json pod_spec = Json::object();
  pod_spec["nodeSelector"] = g.node_selector;
  pod_spec["terminationGracePeriodSeconds"] = g.local_disk ? unmountGrace(backend) + 60 : 60;
  pod_spec["dnsPolicy"] = m.host_fabric ? "ClusterFirstWithHostNet" : "ClusterFirst";
  if (m.host_fabric) {
    pod_spec["hostNetwork"] = true;
  }
  pod_spec["automountServiceAccountToken"] = elect;
  pod_spec["serviceAccountName"] =
      elect ? memberName(backend.metadata.name) : std::string(kUnelectedServiceAccount);
  if (!backend.spec.image_pull_secrets.empty()) {
    pod_spec["imagePullSecrets"] = pullSecrets(backend);
  }
  if (g.runtime_class_name) {
    pod_spec["runtimeClassName"] = *g.runtime_class_name;
  }
  pod_spec["securityContext"] = memberPodSecurityContext(g.security_context);
  if (g.local_disk) {
    pod_spec["initContainers"] =
        Json::array({localDiskSurvey(*g.local_disk, g.security_context, m)});
  }
  pod_spec["containers"] = Json::array({memberContainer(backend, g, group, inputs, m)});
  if (Json volumes = memberVolumes(g); !volumes.empty()) {
    pod_spec["volumes"] = std::move(volumes);
  }
  return pod_spec;
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
  KVC_ASSIGN_OR_RETURN(const MemberSettings m, memberSettings(backend, group, inputs));

  // The template is hashed as rendered, then stamped with its hash (see podSpecHash).
  const std::string component = memberComponent(group);
  Json pod_template = {{"metadata", {{"labels", objectLabels(b, component)}}},
                       {"spec", memberPodSpec(backend, g, group, inputs, m)}};
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
