#pragma once
// The Pod Security Standards as the API server's Pod Security admission enforces them
// (https://kubernetes.io/docs/concepts/security/pod-security-standards/, and the checks of
// staging/src/k8s.io/pod-security-admission/policy/check_*.go): a Pod spec and a level in, every
// violation out. Pure. ModelDeployment admission evaluates each role's rendered Pod template with
// it against the level its namespace enforces, so that a role the namespace would refuse is
// refused at apply time instead of failing later, silently, in the ReplicaSet (FailedCreate).
//
// The checks are those of policy version `latest` on Kubernetes 1.36 (there `latest` resolves to
// the newest registered check revision, v1.35; 1.37 only adds two safe sysctls):
//
//   privileged  nothing is checked.
//   baseline    Windows hostProcess; hostNetwork, hostPID, hostIPC; privileged containers;
//               capabilities added beyond the baseline set; hostPath volumes; hostPort; AppArmor
//               (the fields, and the deprecated container.apparmor.security.beta.kubernetes.io/
//               annotations of the template); SELinux type, user and role; procMount other than
//               Default (allowed for a Pod with hostUsers: false); seccomp Unconfined; sysctls
//               outside the safe set; a host on probes and lifecycle handlers.
//   restricted  baseline, with hostPath replaced by the volume-type allow-list, and baseline's
//               capabilities, seccomp and procMount checks replaced by stricter ones:
//               allowPrivilegeEscalation false; runAsNonRoot true and runAsUser not 0 (both
//               skipped with hostUsers: false); seccomp RuntimeDefault or Localhost; capabilities
//               drop ALL and add at most NET_BIND_SERVICE (these three not on spec.os.name
//               windows); procMount Default.
//
// Every container is visited as Kubernetes visits them: initContainers, containers, then
// ephemeralContainers. Each violation names its field inside the Pod spec, one per offending
// field ("containers[0].securityContext.privileged"; "securityContext.runAsNonRoot" for the Pod
// level), the check that found it (Kubernetes' check ID), and a short reason. A value of the wrong
// JSON type reads as absent (the API server would have refused it already).
//
// Not modelled: the admission configuration's exemptions (usernames, runtime classes,
// namespaces) and a cluster-wide default other than privileged; a pinned
// pod-security.kubernetes.io/enforce-version (see enforcedPodSecurityLevel).

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/common/json.h"

namespace kvc::policy {

// The namespace labels of Pod Security admission's enforce mode.
inline constexpr std::string_view kPodSecurityEnforceLabel = "pod-security.kubernetes.io/enforce";
inline constexpr std::string_view kPodSecurityEnforceVersionLabel =
    "pod-security.kubernetes.io/enforce-version";

enum class PodSecurityLevel { Privileged, Baseline, Restricted };

// "privileged", "baseline", "restricted": the label's spelling.
std::string_view podSecurityLevelName(PodSecurityLevel level);

// The level a namespace with `labels` enforces, as Kubernetes resolves its enforce label
// (pod-security-admission api.PolicyToEvaluate):
// - absent: the cluster's default, which is privileged unless an administrator configured the
//   PodSecurity admission plugin otherwise (that configuration cannot be read from the API);
// - "privileged", "baseline" or "restricted" (exactly; the label is case-sensitive): that level;
// - any other value: restricted. Kubernetes fails closed on an enforce label it cannot parse
//   (api.ParseLevel returns restricted with the error), while audit and warn fail open.
// pod-security.kubernetes.io/enforce-version is not read: a pinned version runs that version's
// checks, and those of `latest` approximate them fairly. For what a ModelDeployment can ask for —
// a privileged container, a hostPath volume, the net.ipv4.tcp_tw_reuse sysctl, and the missing
// restricted security context — every version since v1.0 decides the same.
PodSecurityLevel enforcedPodSecurityLevel(const std::map<std::string, std::string>& labels);

struct PodSecurityViolation {
  std::string check;   // Kubernetes' check ID: "privileged", "hostPathVolumes", "sysctls", …
  std::string field;   // inside the Pod spec: "containers[0].securityContext.privileged"
  std::string reason;  // "privileged containers are forbidden"

  friend bool operator==(const PodSecurityViolation&, const PodSecurityViolation&) = default;
};

// Every violation of `pod_spec` (a Pod's spec, or a Pod template's) at `level`; none at
// privileged. `annotations` are the Pod's (or the template's) metadata.annotations, read for the
// deprecated AppArmor annotations only; those violations name
// "metadata.annotations[<key>]".
std::vector<PodSecurityViolation> evaluatePodSecurity(const Json& pod_spec, PodSecurityLevel level,
                                                      const Json& annotations = Json::object());

}  // namespace kvc::policy
