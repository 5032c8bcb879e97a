#include "kvc/policy/inject/render.h"

#include "kvc/policy/inject/keys.h"

namespace kvc::policy {

Json EnvVar::toJson() const {
  Json entry = Json::object();
  entry["name"] = name;
  if (!field_path.empty()) {
    entry["valueFrom"] = Json{{"fieldRef", Json{{"fieldPath", field_path}}}};
  } else {
    entry["value"] = value;
  }
  return entry;
}

std::string renderClientConfigJson(const Resolution& resolution) {
  Json config = Json::object();
  config["metadata_server"] = kMetadataServer;
  config["master_server_address"] = resolution.master_address;
  config["protocol"] = resolution.protocol;
  config["device_name"] = "";  // every device found: the only value right for every host
  config["mode"] = kStandaloneStoreMode;
  config["global_segment_size"] = kGlobalSegmentSize;
  config["local_buffer_size"] = kLocalBufferSize;
  if (resolution.tenant_injected) {
    config["tenant_id"] = resolution.domain.name;
  }
  return config.dump();
}

std::string renderKVTransferConfig(Engine engine, Role role) {
  Json config = Json::object();
  config["kv_connector"] =
      engine == Engine::VLLMAscend ? "AscendStoreConnector" : "MooncakeStoreConnector";
  config["kv_role"] = role == Role::Prefill  ? "kv_producer"
                      : role == Role::Decode ? "kv_consumer"
                                             : "kv_both";
  return config.dump();
}

ClientRender renderClient(Engine engine, Role role, const Resolution& resolution,
                          const api::Settings& settings, bool host_tier_switch) {
  ClientRender out;
  if (isVLLMFamily(engine)) {
    out.vehicle = "file";
    out.env.push_back({"MOONCAKE_CONFIG_PATH", std::string(kConfigFilePath), ""});
    out.args = {"--kv-transfer-config", renderKVTransferConfig(engine, role)};
    out.client_config = renderClientConfigJson(resolution);
    const std::string field_path =
        "metadata.annotations['" + std::string(kAnnotationClientConfig) + "']";
    out.volume =
        Json{{"name", kVolumeName},
             {"downwardAPI",
              {{"items", Json::array({Json{{"path", kConfigFileName},
                                           {"fieldRef", {{"fieldPath", field_path}}}}})}}}};
    out.mount = Json{{"name", kVolumeName}, {"mountPath", kMountPath}, {"readOnly", true}};
  } else {
    out.vehicle = "environment";
    if (resolution.tenant_injected) {
      out.env.push_back({"MOONCAKE_TENANT_ID", resolution.domain.name, ""});
    }
    out.env.push_back({"MOONCAKE_MASTER", resolution.master_address, ""});
    out.env.push_back({"MOONCAKE_TE_META_DATA_SERVER", std::string(kMetadataServer), ""});
    out.env.push_back({"MOONCAKE_PROTOCOL", resolution.protocol, ""});
    out.env.push_back({"MOONCAKE_DEVICE", "", ""});
    out.env.push_back({"MOONCAKE_GLOBAL_SEGMENT_SIZE", std::to_string(kGlobalSegmentSize), ""});
    out.env.push_back({"MOONCAKE_LOCAL_HOSTNAME", "", "status.podIP"});
    out.args = {"--hicache-storage-backend", "mooncake"};
  }
  if (settings.kv_cache_dtype_owned) {
    out.args.push_back("--kv-cache-dtype");
    out.args.push_back(resolution.domain.dtype);
  }
  // The host tier the storage backend hangs off, after the injected arguments (seed: "SGLang
  // host-memory tier"); pinned by the golden cases.
  if (engine == Engine::SGLang && host_tier_switch) {
    out.args.push_back("--enable-hierarchical-cache");
  }
  out.env_defaults = {{"MC_TE_METRIC", "1", ""}, {"MC_STORE_CLIENT_METRIC_BANDWIDTH", "1", ""}};
  return out;
}

}  // namespace kvc::policy
