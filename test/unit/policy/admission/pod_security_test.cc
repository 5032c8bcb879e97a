#include "kvc/policy/admission/pod_security.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvc::policy {
namespace {

using testing::ElementsAre;
using testing::IsEmpty;

// A Pod every level admits: the Pod runs as non-root with the runtime's seccomp profile, and its
// container drops every capability and cannot escalate.
Json compliantPod() {
  return Json::parse(R"({
    "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [{"name": "engine", "image": "vllm/vllm-openai:v1.0",
                    "securityContext": {"allowPrivilegeEscalation": false,
                                        "capabilities": {"drop": ["ALL"]}}}]})");
}

// compliantPod() with `patch` merged in (RFC 7386: an array replaces the whole array).
Json compliantPodWith(const std::string& patch) {
  Json pod = compliantPod();
  pod.merge_patch(Json::parse(patch));
  return pod;
}

// compliantPod() whose container's securityContext has `patch` merged in.
Json containerWith(const std::string& patch) {
  Json pod = compliantPod();
  pod["containers"][0]["securityContext"].merge_patch(Json::parse(patch));
  return pod;
}

// "check field" of each violation, in order.
std::vector<std::string> found(const Json& pod, PodSecurityLevel level,
                               const Json& annotations = Json::object()) {
  std::vector<std::string> out;
  for (const PodSecurityViolation& v : evaluatePodSecurity(pod, level, annotations)) {
    EXPECT_FALSE(v.reason.empty()) << v.check;
    out.push_back(v.check + " " + v.field);
  }
  return out;
}

std::vector<std::string> atBaseline(const Json& pod) {
  return found(pod, PodSecurityLevel::Baseline);
}
std::vector<std::string> atRestricted(const Json& pod) {
  return found(pod, PodSecurityLevel::Restricted);
}

TEST(PodSecurityLevels, AnAbsentLabelIsTheClusterDefaultPrivilegedAndAnInvalidOneIsRestricted) {
  const std::string label(kPodSecurityEnforceLabel);
  EXPECT_EQ(enforcedPodSecurityLevel({}), PodSecurityLevel::Privileged);
  EXPECT_EQ(enforcedPodSecurityLevel({{"pod-security.kubernetes.io/warn", "restricted"}}),
            PodSecurityLevel::Privileged);
  EXPECT_EQ(enforcedPodSecurityLevel({{label, "privileged"}}), PodSecurityLevel::Privileged);
  EXPECT_EQ(enforcedPodSecurityLevel({{label, "baseline"}}), PodSecurityLevel::Baseline);
  EXPECT_EQ(enforcedPodSecurityLevel({{label, "restricted"}}), PodSecurityLevel::Restricted);
  // Kubernetes fails closed on an enforce label it cannot parse; the label is case-sensitive.
  EXPECT_EQ(enforcedPodSecurityLevel({{label, "Baseline"}}), PodSecurityLevel::Restricted);
  EXPECT_EQ(enforcedPodSecurityLevel({{label, ""}}), PodSecurityLevel::Restricted);
  // A pinned version is read as latest.
  EXPECT_EQ(enforcedPodSecurityLevel(
                {{label, "baseline"}, {std::string(kPodSecurityEnforceVersionLabel), "v1.25"}}),
            PodSecurityLevel::Baseline);
  EXPECT_EQ(podSecurityLevelName(PodSecurityLevel::Baseline), "baseline");
}

TEST(PodSecurity, PrivilegedChecksNothing) {
  const Json pod = Json::parse(R"({
    "hostNetwork": true, "hostPID": true,
    "securityContext": {"sysctls": [{"name": "net.ipv4.tcp_tw_reuse", "value": "1"}]},
    "containers": [{"name": "c", "securityContext": {"privileged": true, "runAsUser": 0}}],
    "volumes": [{"name": "h", "hostPath": {"path": "/"}}]})");
  EXPECT_THAT(found(pod, PodSecurityLevel::Privileged), IsEmpty());
}

TEST(PodSecurity, ACompliantPodPassesEveryLevel) {
  EXPECT_THAT(atBaseline(compliantPod()), IsEmpty());
  EXPECT_THAT(atRestricted(compliantPod()), IsEmpty());
}

TEST(PodSecurity, ABarePodPassesBaselineAndMissesEachRestrictedRequirement) {
  const Json pod = Json::parse(R"({"containers": [{"name": "c"}]})");
  EXPECT_THAT(atBaseline(pod), IsEmpty());
  EXPECT_THAT(
      atRestricted(pod),
      ElementsAre("allowPrivilegeEscalation containers[0].securityContext.allowPrivilegeEscalation",
                  "runAsNonRoot containers[0].securityContext.runAsNonRoot",
                  "seccompProfile_restricted containers[0].securityContext.seccompProfile.type",
                  "capabilities_restricted containers[0].securityContext.capabilities.drop"));
}

TEST(PodSecurity, HostProcessAtThePodAndContainerLevel) {
  const Json pod =
      compliantPodWith(R"({"securityContext": {"windowsOptions": {"hostProcess": true}}})");
  const std::string expected = "windowsHostProcess securityContext.windowsOptions.hostProcess";
  EXPECT_THAT(atBaseline(pod), ElementsAre(expected));
  EXPECT_THAT(atRestricted(pod), ElementsAre(expected));
  EXPECT_THAT(
      atBaseline(containerWith(R"({"windowsOptions": {"hostProcess": true}})")),
      ElementsAre("windowsHostProcess containers[0].securityContext.windowsOptions.hostProcess"));
  EXPECT_THAT(atBaseline(containerWith(R"({"windowsOptions": {"hostProcess": false}})")),
              IsEmpty());
}

TEST(PodSecurity, HostNamespaces) {
  const Json pod = compliantPodWith(R"({"hostNetwork": true, "hostPID": true, "hostIPC": true})");
  const auto expected =
      ElementsAre("hostNamespaces hostNetwork", "hostNamespaces hostPID", "hostNamespaces hostIPC");
  EXPECT_THAT(atBaseline(pod), expected);
  EXPECT_THAT(atRestricted(pod), expected);
  EXPECT_THAT(atBaseline(compliantPodWith(R"({"hostNetwork": false})")), IsEmpty());
}

TEST(PodSecurity, PrivilegedContainersInEveryContainerList) {
  Json pod = containerWith(R"({"privileged": true})");
  pod["initContainers"] =
      Json::parse(R"([{"name": "i", "securityContext": {"privileged": true}}])");
  pod["ephemeralContainers"] =
      Json::parse(R"([{"name": "e", "securityContext": {"privileged": true}}])");
  EXPECT_THAT(atBaseline(pod),
              ElementsAre("privileged initContainers[0].securityContext.privileged",
                          "privileged containers[0].securityContext.privileged",
                          "privileged ephemeralContainers[0].securityContext.privileged"));
  EXPECT_THAT(atRestricted(containerWith(R"({"privileged": true})")),
              ElementsAre("privileged containers[0].securityContext.privileged"));
  EXPECT_THAT(atBaseline(containerWith(R"({"privileged": false})")), IsEmpty());
}

TEST(PodSecurity, CapabilitiesBaselineSetAndRestrictedDropAll) {
  const Json pod = containerWith(R"({"capabilities": {"add": ["CHOWN", "NET_ADMIN"]}})");
  EXPECT_THAT(
      atBaseline(pod),
      ElementsAre("capabilities_baseline containers[0].securityContext.capabilities.add[1]"));
  EXPECT_THAT(
      atRestricted(pod),
      ElementsAre("capabilities_restricted containers[0].securityContext.capabilities.add[0]",
                  "capabilities_restricted containers[0].securityContext.capabilities.add[1]"));
  const Json bind = containerWith(R"({"capabilities": {"add": ["NET_BIND_SERVICE"]}})");
  EXPECT_THAT(atBaseline(bind), IsEmpty());
  EXPECT_THAT(atRestricted(bind), IsEmpty());
  const Json no_drop = containerWith(R"({"capabilities": {"drop": ["NET_RAW"]}})");
  EXPECT_THAT(atBaseline(no_drop), IsEmpty());
  EXPECT_THAT(
      atRestricted(no_drop),
      ElementsAre("capabilities_restricted containers[0].securityContext.capabilities.drop"));
}

TEST(PodSecurity, HostPathAtBaselineAndTheVolumeAllowListAtRestricted) {
  const Json pod = compliantPodWith(R"({"volumes": [
    {"name": "cfg", "configMap": {"name": "c"}},
    {"name": "host", "hostPath": {"path": "/models"}},
    {"name": "disk", "gcePersistentDisk": {"pdName": "d"}},
    {"name": "img", "image": {"reference": "models:1"}},
    {"name": "api", "downwardAPI": {"items": []}}]})");
  EXPECT_THAT(atBaseline(pod), ElementsAre("hostPathVolumes volumes[1].hostPath"));
  EXPECT_THAT(atRestricted(pod), ElementsAre("restrictedVolumes volumes[1].hostPath",
                                             "restrictedVolumes volumes[2].gcePersistentDisk"));
}

TEST(PodSecurity, HostPorts) {
  Json pod = compliantPod();
  pod["containers"][0]["ports"] = Json::parse(
      R"([{"containerPort": 8000}, {"containerPort": 9000, "hostPort": 0},
          {"containerPort": 9100, "hostPort": 9100}])");
  EXPECT_THAT(atBaseline(pod), ElementsAre("hostPorts containers[0].ports[2].hostPort"));
  EXPECT_THAT(atRestricted(pod), ElementsAre("hostPorts containers[0].ports[2].hostPort"));
}

TEST(PodSecurity, AppArmorFieldsAndAnnotations) {
  const Json pod = containerWith(R"({"appArmorProfile": {"type": "Unconfined"}})");
  EXPECT_THAT(atBaseline(pod),
              ElementsAre("appArmorProfile containers[0].securityContext.appArmorProfile.type"));
  EXPECT_THAT(atRestricted(pod),
              ElementsAre("appArmorProfile containers[0].securityContext.appArmorProfile.type"));
  EXPECT_THAT(atBaseline(compliantPodWith(
                  R"({"securityContext": {"appArmorProfile": {"type": "Localhost"}}})")),
              IsEmpty());
  const Json annotations = Json::parse(R"({
    "container.apparmor.security.beta.kubernetes.io/engine": "unconfined",
    "container.apparmor.security.beta.kubernetes.io/sidecar": "localhost/mine",
    "container.apparmor.security.beta.kubernetes.io/other": "runtime/default"})");
  EXPECT_THAT(found(compliantPod(), PodSecurityLevel::Baseline, annotations),
              ElementsAre("appArmorProfile "
                          "metadata.annotations[container.apparmor.security.beta.kubernetes.io/"
                          "engine]"));
}

TEST(PodSecurity, SELinuxTypeUserAndRole) {
  EXPECT_THAT(atBaseline(containerWith(R"({"seLinuxOptions": {"type": "spc_t"}})")),
              ElementsAre("seLinuxOptions containers[0].securityContext.seLinuxOptions.type"));
  EXPECT_THAT(atBaseline(containerWith(
                  R"({"seLinuxOptions": {"type": "container_engine_t", "level": "s0:c1"}})")),
              IsEmpty());
  const Json pod = compliantPodWith(R"({"securityContext": {"seLinuxOptions": {"user": "root"}}})");
  EXPECT_THAT(atBaseline(pod), ElementsAre("seLinuxOptions securityContext.seLinuxOptions.user"));
  EXPECT_THAT(atRestricted(pod), ElementsAre("seLinuxOptions securityContext.seLinuxOptions.user"));
}

TEST(PodSecurity, ProcMountIsRelaxedAtBaselineOnlyForAUserNamespacedPod) {
  const Json pod = containerWith(R"({"procMount": "Unmasked"})");
  EXPECT_THAT(atBaseline(pod), ElementsAre("procMount containers[0].securityContext.procMount"));
  EXPECT_THAT(atRestricted(pod),
              ElementsAre("procMount_restricted containers[0].securityContext.procMount"));
  Json user_namespaced = pod;
  user_namespaced["hostUsers"] = false;
  EXPECT_THAT(atBaseline(user_namespaced), IsEmpty());
  EXPECT_THAT(atRestricted(user_namespaced),
              ElementsAre("procMount_restricted containers[0].securityContext.procMount"));
  EXPECT_THAT(atRestricted(containerWith(R"({"procMount": "Default"})")), IsEmpty());
}

TEST(PodSecurity, SeccompUnconfinedAtBaselineAndAProfileRequiredAtRestricted) {
  const Json pod =
      compliantPodWith(R"({"securityContext": {"seccompProfile": {"type": "Unconfined"}}})");
  EXPECT_THAT(atBaseline(pod),
              ElementsAre("seccompProfile_baseline securityContext.seccompProfile.type"));
  EXPECT_THAT(
      atRestricted(pod),
      ElementsAre("seccompProfile_restricted securityContext.seccompProfile.type",
                  "seccompProfile_restricted containers[0].securityContext.seccompProfile.type"));
  // The container's own profile covers it when the Pod sets none.
  Json own = containerWith(R"({"seccompProfile": {"type": "Localhost", "localhostProfile": "p"}})");
  own["securityContext"].erase("seccompProfile");
  EXPECT_THAT(atRestricted(own), IsEmpty());
}

TEST(PodSecurity, SysctlsOutsideTheSafeSet) {
  const Json pod = compliantPodWith(R"({"securityContext": {"sysctls": [
    {"name": "net.ipv4.tcp_rmem", "value": "4096 87380 6291456"},
    {"name": "net.ipv4.tcp_tw_reuse", "value": "1"},
    {"name": "kernel.shm_rmid_forced", "value": "1"},
    {"name": "net.ipv4.tcp_keepalive_probes", "value": "3"}]}})");
  EXPECT_THAT(atBaseline(pod), ElementsAre("sysctls securityContext.sysctls[1].name"));
  EXPECT_THAT(atRestricted(pod), ElementsAre("sysctls securityContext.sysctls[1].name"));
}

TEST(PodSecurity, AHostOnProbesAndLifecycleHandlers) {
  Json pod = compliantPod();
  pod["containers"][0]["readinessProbe"] =
      Json::parse(R"({"httpGet": {"path": "/health", "port": 8000}})");
  pod["containers"][0]["livenessProbe"] =
      Json::parse(R"({"tcpSocket": {"host": "10.0.0.1", "port": 8000}})");
  pod["containers"][0]["lifecycle"] =
      Json::parse(R"({"preStop": {"httpGet": {"host": "metadata", "path": "/", "port": 80}}})");
  const auto expected =
      ElementsAre("hostProbesAndHostLifecycle containers[0].livenessProbe.tcpSocket.host",
                  "hostProbesAndHostLifecycle containers[0].lifecycle.preStop.httpGet.host");
  EXPECT_THAT(atBaseline(pod), expected);
  EXPECT_THAT(atRestricted(pod), expected);
}

TEST(PodSecurity, PrivilegeEscalationRunAsNonRootAndRunAsUserAreRestrictedOnly) {
  const Json escalates = containerWith(R"({"allowPrivilegeEscalation": true})");
  EXPECT_THAT(atBaseline(escalates), IsEmpty());
  EXPECT_THAT(
      atRestricted(escalates),
      ElementsAre(
          "allowPrivilegeEscalation containers[0].securityContext.allowPrivilegeEscalation"));

  const Json root = containerWith(R"({"runAsNonRoot": false, "runAsUser": 0})");
  EXPECT_THAT(atBaseline(root), IsEmpty());
  EXPECT_THAT(atRestricted(root),
              ElementsAre("runAsNonRoot containers[0].securityContext.runAsNonRoot",
                          "runAsUser containers[0].securityContext.runAsUser"));
  const Json pod_root =
      compliantPodWith(R"({"securityContext": {"runAsNonRoot": false, "runAsUser": 0}})");
  EXPECT_THAT(atRestricted(pod_root),
              ElementsAre("runAsNonRoot securityContext.runAsNonRoot",
                          "runAsNonRoot containers[0].securityContext.runAsNonRoot",
                          "runAsUser securityContext.runAsUser"));
  // A non-root user id without runAsNonRoot does not satisfy runAsNonRoot.
  Json uid = compliantPodWith(R"({"securityContext": {"runAsUser": 1000}})");
  uid["securityContext"].erase("runAsNonRoot");
  EXPECT_THAT(atRestricted(uid),
              ElementsAre("runAsNonRoot containers[0].securityContext.runAsNonRoot"));
}

TEST(PodSecurity, AUserNamespacedPodMayRunAsRootUnderRestricted) {
  Json pod = compliantPodWith(R"({"hostUsers": false, "securityContext": {"runAsUser": 0}})");
  pod["securityContext"].erase("runAsNonRoot");
  EXPECT_THAT(atRestricted(pod), IsEmpty());
  pod["hostUsers"] = true;
  EXPECT_THAT(atRestricted(pod),
              ElementsAre("runAsNonRoot containers[0].securityContext.runAsNonRoot",
                          "runAsUser securityContext.runAsUser"));
}

TEST(PodSecurity, AWindowsPodIsExemptFromTheLinuxOnlyRestrictedChecks) {
  const Json pod = Json::parse(R"({"os": {"name": "windows"},
    "securityContext": {"runAsNonRoot": true}, "containers": [{"name": "c"}]})");
  EXPECT_THAT(atRestricted(pod), IsEmpty());
  Json linux_pod = pod;
  linux_pod["os"]["name"] = "linux";
  EXPECT_THAT(
      atRestricted(linux_pod),
      ElementsAre("allowPrivilegeEscalation containers[0].securityContext.allowPrivilegeEscalation",
                  "seccompProfile_restricted containers[0].securityContext.seccompProfile.type",
                  "capabilities_restricted containers[0].securityContext.capabilities.drop"));
}

TEST(PodSecurity, EachViolationCarriesAShortReason) {
  const auto violations =
      evaluatePodSecurity(containerWith(R"({"privileged": true})"), PodSecurityLevel::Baseline);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0],
            (PodSecurityViolation{"privileged", "containers[0].securityContext.privileged",
                                  "privileged containers are forbidden"}));
}

}  // namespace
}  // namespace kvc::policy
