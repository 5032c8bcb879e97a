#include "model_deployment_pod_security.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <set>
#include <utility>

#include "kvc/api/settings.h"
#include "kvc/policy/admission/pod_security.h"
#include "kvc/policy/base/json_lookup.h"
#include "kvc/policy/base/text.h"
#include "kvc/policy/model_deployment/model_deployment_render.h"

namespace kvc::policy {
namespace {

constexpr std::string_view kTcpTwReuseSysctl = "net.ipv4.tcp_tw_reuse";
// The renderer names roles[].additionalVolumes[k] `additional-<k>`.
constexpr std::string_view kAdditionalVolume = "additional-";

// What restricted requires of every container and no ModelDeployment field sets, by check ID.
constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kUnsettable{
    {{"allowPrivilegeEscalation", "allowPrivilegeEscalation: false"},
     {"runAsNonRoot", "runAsNonRoot: true"},
     {"runAsUser", "a runAsUser other than 0"},
     {"seccompProfile_restricted", "seccompProfile RuntimeDefault or Localhost"},
     {"capabilities_restricted", "capabilities drop [ALL]"}}};

std::optional<std::string_view> unsettable(std::string_view check) {
  for (const auto& [id, requirement] : kUnsettable) {
    if (id == check) {
      return requirement;
    }
  }
  return std::nullopt;
}

// The index `text` begins with after `prefix` ("volumes[3].hostPath" after "volumes["), or
// nullopt.
std::optional<std::size_t> indexAfter(std::string_view text, std::string_view prefix) {
  if (!text.starts_with(prefix)) {
    return std::nullopt;
  }
  std::size_t index = 0;
  const char* begin = text.data() + prefix.size();
  const auto [end, error] = std::from_chars(begin, text.data() + text.size(), index);
  if (error != std::errc() || end == begin) {
    return std::nullopt;
  }
  return index;
}

// A role's Pod as the controller renders it: the template's spec and annotations.
struct RolePod {
  Json spec;
  Json annotations;
};

// The deployment with what renderModelDeployment refuses on its own (and admission refuses
// separately) set aside: every role of size 1, an image on every role (no check reads it), and an
// additional volume without exactly one source read as a ConfigMap, keeping its position.
api::ModelDeployment renderable(api::ModelDeployment deployment) {
  for (api::ModelDeploymentRole& role : deployment.spec.roles) {
    role.size = 1;
    if (!role.image || role.image->empty()) {
      role.image = "pod-security-check";
    }
    for (api::RoleVolume& volume : role.additional_volumes) {
      if (volumeSourceProblem(volume)) {
        volume = api::RoleVolume{volume.mount_path, volume.read_only,
                                 volume.sub_path,   std::string("pod-security-check"),
                                 std::nullopt,      std::nullopt};
      }
    }
  }
  return deployment;
}

// Each role's Pod by role name; empty when the deployment does not render at all (an engine with
// no runtime, refused on its own).
std::map<std::string, RolePod> rolePods(const api::ModelDeployment& deployment, bool tcp_tw_reuse) {
  ModelDeploymentInputs inputs;  // no Binding: the attachment adds nothing a level refuses
  inputs.settings.tcp_tw_reuse = tcp_tw_reuse;
  auto manufacturer = modelDeploymentManufacturer(deployment);
  inputs.manufacturer = manufacturer.ok() ? *manufacturer : std::string();
  auto rendered = renderModelDeployment(renderable(deployment), inputs);
  std::map<std::string, RolePod> out;
  if (!rendered.ok()) {
    return out;
  }
  for (const RenderedRole& role : *rendered) {
    const Json& pod_template = field(field(role.deployment, "spec"), "template");
    out[role.name] = {field(pod_template, "spec"),
                      field(field(pod_template, "metadata"), "annotations")};
  }
  return out;
}

class PodSecurityJudge {
public:
  PodSecurityJudge(const ModelDeploymentAdmission& request, PodSecurityLevel level)
      : request_(request),
        md_(request.deployment),
        level_(level),
        old_(request.operation == AdmissionOperation::Update && request.old ? &*request.old
                                                                            : nullptr) {}

  std::vector<FieldError> run() && {
    const std::map<std::string, RolePod> pods = rolePods(md_, request_.tcp_tw_reuse);
    std::map<std::string, RolePod> stored;
    if (old_ != nullptr) {
      stored = rolePods(*old_, request_.tcp_tw_reuse);
    }
    for (std::size_t i = 0; i < md_.spec.roles.size(); ++i) {
      const std::string& name = md_.spec.roles[i].name;
      const auto pod = pods.find(name);
      if (pod == pods.end()) {
        continue;
      }
      const auto before = stored.find(name);
      role(i, pod->second, before == stored.end() ? nullptr : &before->second);
    }
    if (!unmet_.empty()) {
      cannotRun();
    }
    return std::move(errors_);
  }

private:
  // The violations of `pod` that `before` (the stored role's Pod) did not have in the same place.
  std::vector<PodSecurityViolation> newViolations(const RolePod& pod, const RolePod* before) const {
    std::vector<PodSecurityViolation> now = evaluatePodSecurity(pod.spec, level_, pod.annotations);
    if (before == nullptr) {
      return now;
    }
    std::set<std::pair<std::string, std::string>> had;
    for (const PodSecurityViolation& v :
         evaluatePodSecurity(before->spec, level_, before->annotations)) {
      had.insert({v.check, v.field});
    }
    std::erase_if(now, [&](const PodSecurityViolation& v) {
      return had.contains({v.check, v.field});
    });
    return now;
  }

  void role(std::size_t i, const RolePod& pod, const RolePod* before) {
    const std::string at = "spec.roles[" + std::to_string(i) + "]";
    for (const PodSecurityViolation& v : newViolations(pod, before)) {
      if (v.check == "privileged") {
        forbid(at + ".privileged", "true",
               ", which forbids privileged containers" + refusedPods(i) + " Remove " + at +
                   ".privileged (or set it false), or" + askForPrivileged());
      } else if (auto volume = indexAfter(v.field, "volumes[")) {
        hostPath(i, at, pod, *volume, v);
      } else if (auto sysctl = indexAfter(v.field, "securityContext.sysctls[")) {
        sysctlSetting(i, at, pod, *sysctl, v);
      } else if (auto requirement = unsettable(v.check)) {
        const std::string quoted = inQuotes(md_.spec.roles[i].name);
        if (std::find(unmet_roles_.begin(), unmet_roles_.end(), quoted) == unmet_roles_.end()) {
          unmet_roles_.push_back(quoted);
        }
        unmet_.insert(*requirement);
      } else {
        otherViolation(i, at, v);
      }
    }
  }

  // volumes[n]: roles[].additionalVolumes[k] when the renderer named it additional-<k>.
  void hostPath(std::size_t i, const std::string& at, const RolePod& pod, std::size_t n,
                const PodSecurityViolation& v) {
    const Json& volumes = field(pod.spec, "volumes");
    const std::string name =
        volumes.is_array() && n < volumes.size() ? text(volumes[n], "name") : std::string();
    const auto k = indexAfter(name, kAdditionalVolume);
    const api::ModelDeploymentRole& r = md_.spec.roles[i];
    if (!k || *k >= r.additional_volumes.size() || !r.additional_volumes[*k].host_path) {
      otherViolation(i, at, v);
      return;
    }
    const std::string volume = at + ".additionalVolumes[" + std::to_string(*k) + "]";
    forbid(volume + ".hostPath", r.additional_volumes[*k].host_path->path,
           ", which forbids hostPath volumes" + refusedPods(i) + " Remove the volume, or mount a " +
               "configMap or secret instead, or" + askForPrivileged());
  }

  // securityContext.sysctls[j]: the Setting's net.ipv4.tcp_tw_reuse on an SGLang Prefill role.
  void sysctlSetting(std::size_t i, const std::string& at, const RolePod& pod, std::size_t j,
                     const PodSecurityViolation& v) {
    const Json& sysctls = field(field(pod.spec, "securityContext"), "sysctls");
    if (!sysctls.is_array() || j >= sysctls.size() ||
        text(sysctls[j], "name") != kTcpTwReuseSysctl) {
      otherViolation(i, at, v);
      return;
    }
    const std::string setting(api::kSettingTcpTwReuse);
    errors_.push_back(
        {FieldErrorType::Forbidden, at, std::nullopt,
         "the Setting " + setting + " (ConfigMap " + std::string(api::kSettingsConfigMap) +
             " in the operator's namespace) sets the sysctl " + std::string(kTcpTwReuseSysctl) +
             " on the Pods of this SGLang Prefill role, and " + where() +
             ", which allows only the safe sysctls" + refusedPods(i) +
             " Ask an administrator to turn " + setting + " off, or for a namespace whose " +
             std::string(kPodSecurityEnforceLabel) + " level allows it (privileged)"});
  }

  // A violation no role field explains (a renderer change would show here first).
  void otherViolation(std::size_t i, const std::string& at, const PodSecurityViolation& v) {
    errors_.push_back({FieldErrorType::Forbidden, at, std::nullopt,
                       "the role's Pods would set " + v.field + " (" + v.reason + "), and " +
                           where() + ", which forbids it (check " + v.check + ")" + refusedPods(i) +
                           " Ask an administrator for a namespace whose " +
                           std::string(kPodSecurityEnforceLabel) + " level allows it"});
  }

  // Restricted's requirements of every container, which no ModelDeployment field sets: one error
  // for the deployment.
  void cannotRun() {
    std::vector<std::string> requirements;
    for (const auto& [check, requirement] : kUnsettable) {
      if (unmet_.contains(requirement)) {
        requirements.push_back(std::string(requirement));
      }
    }
    errors_.push_back(
        {FieldErrorType::Forbidden, "metadata.namespace", md_.metadata.namespace_name,
         where() + ", which this workload cannot run under: the engine Pods of " +
             (unmet_roles_.size() == 1 ? "role " : "roles ") + commaList(unmet_roles_) +
             " would need " + commaList(requirements) +
             " in their securityContext, and no ModelDeployment field sets them (the engine "
             "images run as root). Create the ModelDeployment in a namespace whose " +
             std::string(kPodSecurityEnforceLabel) +
             " level is baseline or privileged (ask an administrator)"});
  }

  void forbid(std::string field_path, std::string value, const std::string& what) {
    errors_.push_back(
        {FieldErrorType::Forbidden, std::move(field_path), std::move(value), where() + what});
  }

  // `namespace "x" enforces Pod Security level "baseline" (label …)`.
  std::string where() const {
    const auto& labels = *request_.namespace_labels;
    const auto label = labels.find(std::string(kPodSecurityEnforceLabel));
    std::string out = "namespace " + inQuotes(md_.metadata.namespace_name) +
                      " enforces Pod Security level " + inQuotes(podSecurityLevelName(level_)) +
                      " (label " + std::string(kPodSecurityEnforceLabel);
    if (label != labels.end() && label->second != podSecurityLevelName(level_)) {
      out += " is " + inQuotes(label->second) + ", not a level, which Kubernetes enforces as " +
             std::string(podSecurityLevelName(level_));
    }
    return out + ")";
  }

  std::string refusedPods(std::size_t i) const {
    return ": the API server would refuse every Pod of role " + inQuotes(md_.spec.roles[i].name) +
           " (its ReplicaSet reports FailedCreate, and the role never runs).";
  }

  static std::string askForPrivileged() {
    return " ask an administrator for a namespace whose " + std::string(kPodSecurityEnforceLabel) +
           " level allows it (privileged)";
  }

  const ModelDeploymentAdmission& request_;
  const api::ModelDeployment& md_;
  PodSecurityLevel level_;
  const api::ModelDeployment* old_;
  std::vector<std::string> unmet_roles_;  // quoted, in spec order
  std::set<std::string_view> unmet_;
  std::vector<FieldError> errors_;
};

}  // namespace

std::vector<FieldError> modelDeploymentPodSecurityErrors(const ModelDeploymentAdmission& request) {
  if (!request.namespace_labels) {
    return {};
  }
  const PodSecurityLevel level = enforcedPodSecurityLevel(*request.namespace_labels);
  if (level == PodSecurityLevel::Privileged) {
    return {};
  }
  return PodSecurityJudge(request, level).run();
}

}  // namespace kvc::policy
