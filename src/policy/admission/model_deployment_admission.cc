#include "kvc/policy/admission/model_deployment_admission.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <span>
#include <variant>

#include "kvc/api/settings.h"
#include "kvc/policy/base/text.h"
#include "kvc/policy/inject/flag_spelling.h"
#include "kvc/policy/inject/keys.h"
#include "kvc/policy/inject/resolve.h"
#include "kvc/policy/model_deployment/model_deployment_render.h"
#include "model_deployment_pod_security.h"

namespace kvc::policy {
namespace {

constexpr std::size_t kMaxLabelValue = 63;
constexpr std::string_view kDtypeFlag = "--kv-cache-dtype";

constexpr std::string_view kConnectorWhy =
    "it selects the connector, which the operator renders from the Binding and the role's kind";
constexpr std::string_view kSourceWhy =
    "it selects where the engine reads its store configuration from, which would leave the "
    "operator's values present and read by nothing";
constexpr std::string_view kBindingWhy =
    "the operator renders it from the Binding, and a second value is an ambiguity nothing "
    "reports";
constexpr std::string_view kLegWhy =
    "it configures the prefill/decode transfer leg, which the operator owns (not offered yet)";
constexpr std::string_view kEventsWhy =
    "it configures KV events, which the operator owns (not offered yet)";

// One owned key and why it is owned.
struct OwnedKey {
  std::string_view key;
  std::string_view why;
};

constexpr std::array<OwnedKey, 2> kVLLMFlags{
    {{"--kv-transfer-config", kConnectorWhy}, {"--kv-events-config", kEventsWhy}}};
constexpr std::array<OwnedKey, 5> kSGLangFlags{
    {{"--hicache-storage-backend", kConnectorWhy},
     {"--hicache-storage-backend-extra-config", kSourceWhy},
     {"--disaggregation-mode", kLegWhy},
     {"--disaggregation-transfer-backend", kLegWhy},
     {"--disaggregation-bootstrap-port", kLegWhy}}};
constexpr std::array<OwnedKey, 2> kVLLMEnv{
    {{"MOONCAKE_CONFIG_PATH", kSourceWhy}, {"VLLM_MOONCAKE_BOOTSTRAP_PORT", kLegWhy}}};
constexpr std::array<OwnedKey, 8> kSGLangEnv{{{"SGLANG_HICACHE_MOONCAKE_CONFIG_PATH", kSourceWhy},
                                              {"MOONCAKE_MASTER", kBindingWhy},
                                              {"MOONCAKE_TE_META_DATA_SERVER", kBindingWhy},
                                              {"MOONCAKE_PROTOCOL", kBindingWhy},
                                              {"MOONCAKE_DEVICE", kBindingWhy},
                                              {"MOONCAKE_GLOBAL_SEGMENT_SIZE", kBindingWhy},
                                              {"MOONCAKE_LOCAL_HOSTNAME", kBindingWhy},
                                              {"MOONCAKE_TENANT_ID", kBindingWhy}}};

std::span<const OwnedKey> ownedFlags(Engine engine) {
  return isVLLMFamily(engine) ? std::span<const OwnedKey>(kVLLMFlags)
                              : std::span<const OwnedKey>(kSGLangFlags);
}

std::span<const OwnedKey> ownedEnv(Engine engine) {
  return isVLLMFamily(engine) ? std::span<const OwnedKey>(kVLLMEnv)
                              : std::span<const OwnedKey>(kSGLangEnv);
}

std::string rolePath(std::size_t index) { return "spec.roles[" + std::to_string(index) + "]"; }

const api::ModelDeploymentRole* roleNamed(const std::vector<api::ModelDeploymentRole>& roles,
                                          std::string_view name) {
  for (const api::ModelDeploymentRole& role : roles) {
    if (role.name == name) {
      return &role;
    }
  }
  return nullptr;
}

class Judge {
public:
  explicit Judge(const ModelDeploymentAdmission& request)
      : request_(request),
        md_(request.deployment),
        old_(request.operation == AdmissionOperation::Update && request.old ? &*request.old
                                                                            : nullptr) {}

  AdmissionVerdict run() && {
    if (old_ != nullptr && old_->spec == md_.spec && old_->metadata.labels == md_.metadata.labels &&
        old_->metadata.annotations == md_.metadata.annotations) {
      return {};  // a finalizer removal (or nothing at all): never refused
    }
    auto manufacturer = modelDeploymentManufacturer(md_);
    if (!manufacturer.ok()) {
      if (old_ == nullptr || annotation(*old_) != annotation(md_)) {
        // The message names the annotation for the controller's RenderFailed; the cause names
        // it already.
        std::string detail = manufacturer.status().message();
        if (const std::string prefix = manufacturerField() + ": "; detail.starts_with(prefix)) {
          detail.erase(0, prefix.size());
        }
        error(FieldErrorType::Invalid, manufacturerField(), annotation(md_), detail);
      }
    } else if (old_ != nullptr && annotation(*old_) != annotation(md_)) {
      error(FieldErrorType::Forbidden, manufacturerField(), std::nullopt,
            manufacturerField() +
                " is frozen after creation (with spec.engine.name it selects the runtime); "
                "create another ModelDeployment");
    }
    auto engine = modelDeploymentEngine(md_, manufacturer.ok() ? *manufacturer : std::string());
    if (!engine.ok()) {
      if (old_ == nullptr) {
        verdict_.errors.push_back({FieldErrorType::Invalid, "spec.engine.name",
                                   md_.spec.engine.name, engine.status().message()});
      }
      engine_ = isVLLM() ? Engine::VLLM : Engine::SGLang;
    } else {
      engine_ = *engine;
    }
    if (old_ != nullptr) {
      frozen();
    } else {
      created();
    }
    notOffered();
    image();
    for (std::size_t i = 0; i < md_.spec.roles.size(); ++i) {
      role(i);
    }
    if (old_ == nullptr && engine.ok()) {
      transport();
    }
    for (FieldError& refused : modelDeploymentPodSecurityErrors(request_)) {
      verdict_.errors.push_back(std::move(refused));
    }
    return std::move(verdict_);
  }

private:
  bool isVLLM() const { return md_.spec.engine.name == api::kEngineVLLM; }

  static std::string manufacturerField() {
    return "metadata.annotations[" + std::string(kAnnotationManufacturer) + "]";
  }
  // The manufacturer annotation as written (nullopt: absent).
  static std::optional<std::string> annotation(const api::ModelDeployment& deployment) {
    const auto& annotations = deployment.metadata.annotations;
    const auto found = annotations.find(std::string(kAnnotationManufacturer));
    if (found == annotations.end()) {
      return std::nullopt;
    }
    return found->second;
  }

  void error(FieldErrorType type, std::string field, std::optional<std::string> value,
             std::string detail) {
    verdict_.errors.push_back({type, std::move(field), std::move(value), std::move(detail)});
  }

  // The stored role of the same name (UPDATE), or null.
  const api::ModelDeploymentRole* stored(const api::ModelDeploymentRole& role) const {
    return old_ == nullptr ? nullptr : roleNamed(old_->spec.roles, role.name);
  }

  void frozen() {
    const std::string again = " is frozen after creation; create another ModelDeployment";
    if (old_->spec.model_name != md_.spec.model_name) {
      error(FieldErrorType::Forbidden, "spec.model.name", std::nullopt, "spec.model.name" + again);
    }
    if (old_->spec.engine.name != md_.spec.engine.name) {
      error(FieldErrorType::Forbidden, "spec.engine.name", std::nullopt,
            "spec.engine.name" + again);
    }
    if (old_->spec.kv_cache != md_.spec.kv_cache) {
      error(FieldErrorType::Forbidden, "spec.kvCache", std::nullopt,
            "the whole spec.kvCache block" + again +
                " (a deployment attaches to one Binding, or to none, for its lifetime)");
    }
    std::set<std::string> names_before;
    std::set<std::string> names_now;
    for (const auto& r : old_->spec.roles) {
      names_before.insert(r.name);
    }
    for (const auto& r : md_.spec.roles) {
      names_now.insert(r.name);
    }
    if (names_before != names_now) {
      error(FieldErrorType::Forbidden, "spec.roles", std::nullopt,
            "the set of roles (" + commaList({names_before.begin(), names_before.end()}) + ")" +
                again + "; roles cannot be added, removed or renamed");
    }
    for (std::size_t i = 0; i < md_.spec.roles.size(); ++i) {
      const api::ModelDeploymentRole& now = md_.spec.roles[i];
      const api::ModelDeploymentRole* before = stored(now);
      if (before == nullptr) {
        continue;
      }
      const std::string at = rolePath(i);
      for (auto [field, moved] :
           {std::pair{".kind", before->kind != now.kind},
            std::pair{".size", before->size != now.size},
            std::pair{".instanceType", before->instance_type != now.instance_type},
            std::pair{".resources", before->resources != now.resources},
            std::pair{".command", before->command != now.command}}) {
        if (moved) {
          error(FieldErrorType::Forbidden, at + field, std::nullopt,
                "roles[]" + std::string(field) + again);
        }
      }
    }
  }

  void created() {
    if (md_.spec.roles.size() > kMaxModelDeploymentRoles) {
      error(FieldErrorType::Invalid, "spec.roles", std::to_string(md_.spec.roles.size()),
            "a ModelDeployment has at most " + std::to_string(kMaxModelDeploymentRoles) +
                " roles; split the workload into several ModelDeployments");
    }
    if (md_.spec.kv_cache && md_.spec.kv_cache->pool_ref.empty()) {
      error(FieldErrorType::Required, "spec.kvCache.poolRef.name", std::nullopt,
            "name the KVCachePoolBinding in namespace " + inQuotes(md_.metadata.namespace_name) +
                " the deployment attaches to, or leave spec.kvCache out for no shared cache");
    }
    if (md_.metadata.name.size() > kMaxLabelValue) {
      error(FieldErrorType::Invalid, "metadata.name", md_.metadata.name,
            "must be at most 63 characters: it is the app.kubernetes.io/instance label of every "
            "rendered Pod");
    }
  }

  void notOffered() {
    if (md_.spec.router && (old_ == nullptr || old_->spec.router != md_.spec.router)) {
      error(FieldErrorType::Forbidden, "spec.router", std::nullopt,
            "the request router is not offered yet; remove spec.router (nothing would render "
            "it)");
    }
    if (md_.spec.kv_transfer_protocol &&
        (old_ == nullptr || old_->spec.kv_transfer_protocol != md_.spec.kv_transfer_protocol)) {
      error(FieldErrorType::Forbidden, "spec.kvTransfer.protocol", *md_.spec.kv_transfer_protocol,
            "the prefill/decode direct transfer leg is not offered yet (Prefill and Decode roles "
            "share blocks through the store only); remove spec.kvTransfer");
    }
    if (old_ != nullptr) {
      return;  // size is frozen
    }
    for (std::size_t i = 0; i < md_.spec.roles.size(); ++i) {
      if (md_.spec.roles[i].size != 1) {
        error(FieldErrorType::Forbidden, rolePath(i) + ".size",
              std::to_string(md_.spec.roles[i].size),
              "serving instances of more than one Pod are not offered yet; use size 1 and "
              "raise replicas");
      }
    }
  }

  void image() {
    if (md_.spec.engine.version || md_.spec.engine.image) {
      return;
    }
    std::vector<std::string> missing;
    bool moved = old_ == nullptr || old_->spec.engine != md_.spec.engine;
    for (const api::ModelDeploymentRole& r : md_.spec.roles) {
      if (!r.image) {
        missing.push_back(r.name);
      }
      const api::ModelDeploymentRole* before = stored(r);
      moved = moved || before == nullptr || before->image != r.image;
    }
    if (!missing.empty() && moved) {
      error(FieldErrorType::Required, "spec.engine.version", std::nullopt,
            "role " + commaList(missing) +
                " names no image, so the image is derived from spec.engine.version; set it, or "
                "spec.engine.image, or an image on every role");
    }
  }

  void role(std::size_t i) {
    const api::ModelDeploymentRole& r = md_.spec.roles[i];
    const api::ModelDeploymentRole* before = stored(r);
    const std::string at = rolePath(i);
    const bool args_moved = before == nullptr || before->extra_args != r.extra_args;
    const bool env_moved = before == nullptr || before->env != r.env;
    const bool volumes_moved =
        before == nullptr || before->additional_volumes != r.additional_volumes;
    if (volumes_moved) {
      volumeSources(r, at);
    }
    if (r.command) {
      if ((args_moved && !r.extra_args.empty()) || (env_moved && !r.env.empty())) {
        verdict_.warnings.push_back(
            at + ".extraArgs and .env are ignored: " + at +
            ".command takes the role over, and nothing is added to that command");
      }
      return;  // take-over: the user owns every key
    }
    if (!md_.spec.kv_cache) {
      return;
    }
    for (std::size_t j = 0; j < r.extra_args.size(); ++j) {
      flag(r, at, j, args_moved);
    }
    if (env_moved) {
      for (std::size_t j = 0; j < r.env.size(); ++j) {
        for (const OwnedKey& owned : ownedEnv(engine_)) {
          if (r.env[j].name == owned.key) {
            error(FieldErrorType::Forbidden, at + ".env[" + std::to_string(j) + "].name",
                  r.env[j].name, "variable " + std::string(owned.key) + ownedBy(owned.why, at));
          }
        }
      }
    }
    if (volumes_moved && isVLLMFamily(engine_)) {
      for (std::size_t k = 0; k < r.additional_volumes.size(); ++k) {
        std::string path = r.additional_volumes[k].mount_path;
        while (path.size() > 1 && path.back() == '/') {
          path.pop_back();
        }
        if (path == kMountPath) {
          error(
              FieldErrorType::Forbidden,
              at + ".additionalVolumes[" + std::to_string(k) + "].mountPath", path,
              "mount path " + std::string(kMountPath) +
                  ownedBy("the client configuration file is projected there from the Binding", at));
        }
      }
    }
  }

  // "… is owned by the operator on <engine> while spec.kvCache is set: <why>. Fix: …".
  std::string ownedBy(std::string_view why, const std::string& at) const {
    return " is owned by the operator on " + std::string(engineDisplayName(engine_)) +
           " while spec.kvCache is set: " + std::string(why) +
           ". Remove it, or take the role over with " + at +
           ".command (then the operator synthesises nothing for that role)";
  }

  // extraArgs[j]: an owned flag in any spelling, and --kv-cache-dtype while the Setting is on
  // (judged on every update: the stored rule of §8).
  void flag(const api::ModelDeploymentRole& r, const std::string& at, std::size_t j,
            bool args_moved) {
    const std::string& token = r.extra_args[j];
    const std::string field = at + ".extraArgs[" + std::to_string(j) + "]";
    if (args_moved) {
      for (const OwnedKey& owned : ownedFlags(engine_)) {
        const std::array<std::string_view, 1> wanted{owned.key};
        if (spelledFlag(token, engine_, wanted)) {
          error(FieldErrorType::Forbidden, field, token,
                spelling(token, owned.key) + ownedBy(owned.why, at));
        }
      }
    }
    const std::array<std::string_view, 1> dtype{kDtypeFlag};
    if (request_.dtype_owned && spelledFlag(token, engine_, dtype)) {
      const std::string why =
          "the dtype comes from the Binding, and engines writing two dtypes into one domain "
          "read each other's blocks wrong (name a Binding declaring the dtype you want; the "
          "Setting " +
          std::string(api::kSettingDtypeOwned) + " off admits the flag)";
      std::string detail = spelling(token, kDtypeFlag) + ownedBy(why, at);
      if (!args_moved) {
        detail +=
            ". A stored ModelDeployment carrying it keeps running with its own value, but "
            "every update is refused until the flag is removed";
      }
      error(FieldErrorType::Forbidden, field, token, std::move(detail));
    }
  }

  // "flag --x" or "flag \"--x_y\" (vLLM's parser reads it as --x)".
  std::string spelling(const std::string& token, std::string_view flag) const {
    const std::string_view name = std::string_view(token).substr(0, token.find('='));
    if (name == flag) {
      return "flag " + std::string(flag);
    }
    return "flag " + inQuotes(name) + " (" + std::string(engineDisplayName(engine_)) +
           "'s parser reads it as " + std::string(flag) + ")";
  }

  void volumeSources(const api::ModelDeploymentRole& r, const std::string& at) {
    for (std::size_t k = 0; k < r.additional_volumes.size(); ++k) {
      if (auto problem = volumeSourceProblem(r.additional_volumes[k])) {
        error(FieldErrorType::Invalid, at + ".additionalVolumes[" + std::to_string(k) + "]",
              std::nullopt, *problem);
      }
    }
  }

  // A new binding's transport, with the rule Pod injection applies.
  void transport() {
    if (!md_.spec.kv_cache || md_.spec.kv_cache->pool_ref.empty() || !request_.attachment) {
      return;
    }
    const AttachmentLookup& found = *request_.attachment;
    const std::string& name = md_.spec.kv_cache->pool_ref;
    const std::string binding = "KVCachePoolBinding " + inQuotes(name);
    const std::string later =
        ": the deployment runs without a shared cache (CacheAttached=False) until it resolves";
    if (!found.binding) {
      verdict_.warnings.push_back(binding + " does not exist in namespace " +
                                  inQuotes(md_.metadata.namespace_name) + later);
    } else if (found.binding->metadata.deleting) {
      verdict_.warnings.push_back(binding + " is being deleted" + later);
    } else if (!found.pool) {
      verdict_.warnings.push_back(binding + " references KVCachePool " +
                                  inQuotes(found.binding->spec.pool_ref) +
                                  ", which does not exist" + later);
    } else if (!found.backend) {
      verdict_.warnings.push_back("KVCachePool " + inQuotes(found.pool->metadata.name) +
                                  " names no existing KVCacheBackend" + later);
    } else {
      auto matched = matchTransport(engine_, api::offeredTransports(*found.backend),
                                    found.pool->metadata.name, found.backend->metadata.name);
      if (auto* refusal = std::get_if<Refusal>(&matched)) {
        error(FieldErrorType::Invalid, "spec.kvCache.poolRef.name", name, refusal->message);
      }
    }
  }

  const ModelDeploymentAdmission& request_;
  const api::ModelDeployment& md_;
  const api::ModelDeployment* old_;
  Engine engine_ = Engine::VLLM;
  AdmissionVerdict verdict_;
};

}  // namespace

Result<AttachmentLookup> lookUpAttachment(const ClusterView& cluster,
                                          std::string_view namespace_name,
                                          std::string_view binding) {
  AttachmentLookup out;
  KVC_ASSIGN_OR_RETURN(out.binding, cluster.binding(namespace_name, binding));
  if (!out.binding) {
    return out;
  }
  KVC_ASSIGN_OR_RETURN(out.pool, cluster.pool(out.binding->spec.pool_ref));
  if (!out.pool || out.pool->spec.backends.empty() || out.pool->spec.backends.front().empty()) {
    return out;
  }
  KVC_ASSIGN_OR_RETURN(out.backend, cluster.backend(out.pool->spec.backends.front()));
  return out;
}

AdmissionVerdict admitModelDeployment(const ModelDeploymentAdmission& request) {
  return Judge(request).run();
}

}  // namespace kvc::policy
