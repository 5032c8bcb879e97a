#include "kvc/policy/admission/pod_security.h"

#include <algorithm>
#include <array>

#include "kvc/policy/base/json_lookup.h"
#include "kvc/policy/base/text.h"

namespace kvc::policy {
namespace {

// check_capabilities_baseline.go: the default set of container runtimes.
constexpr std::array<std::string_view, 13> kBaselineCapabilities{
    "AUDIT_WRITE",      "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",      "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT"};
// check_sysctls.go, sysctlsAllowedV1Dot32 (v1.27: ip_local_reserved_ports; v1.29: the keepalive
// and fin_timeout four; v1.32: tcp_rmem, tcp_wmem). net.ipv4.tcp_tw_reuse is not in it.
constexpr std::array<std::string_view, 12> kSafeSysctls{"kernel.shm_rmid_forced",
                                                        "net.ipv4.ip_local_port_range",
                                                        "net.ipv4.tcp_syncookies",
                                                        "net.ipv4.ping_group_range",
                                                        "net.ipv4.ip_unprivileged_port_start",
                                                        "net.ipv4.ip_local_reserved_ports",
                                                        "net.ipv4.tcp_keepalive_time",
                                                        "net.ipv4.tcp_fin_timeout",
                                                        "net.ipv4.tcp_keepalive_intvl",
                                                        "net.ipv4.tcp_keepalive_probes",
                                                        "net.ipv4.tcp_rmem",
                                                        "net.ipv4.tcp_wmem"};
// check_seLinuxOptions.go, selinuxAllowedTypes1_31 ("" is unset).
constexpr std::array<std::string_view, 5> kSELinuxTypes{"", "container_t", "container_init_t",
                                                        "container_kvm_t", "container_engine_t"};
// check_restrictedVolumes.go: the volume sources restricted admits (image since v1.33).
constexpr std::array<std::string_view, 9> kRestrictedVolumeTypes{
    "configMap", "csi",       "downwardAPI",           "emptyDir", "ephemeral",
    "image",     "projected", "persistentVolumeClaim", "secret"};
constexpr std::array<std::string_view, 2> kProfileTypes{"RuntimeDefault", "Localhost"};
constexpr std::string_view kAppArmorAnnotationPrefix =
    "container.apparmor.security.beta.kubernetes.io/";

template <std::size_t N>
bool isOneOf(const std::array<std::string_view, N>& values, std::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// The JSON boolean at `key`, or nullopt when absent (or not a boolean).
std::optional<bool> flag(const Json& object, std::string_view key) {
  const Json& value = field(object, key);
  return value.is_boolean() ? std::optional<bool>(value.get<bool>()) : std::nullopt;
}

const Json& items(const Json& object, std::string_view key) {
  static const Json kEmpty = Json::array();
  const Json& value = field(object, key);
  return value.is_array() ? value : kEmpty;
}

std::string at(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
}

std::string indexed(std::string_view path, std::size_t index) {
  return std::string(path) + "[" + std::to_string(index) + "]";
}

// A container and the path of its securityContext's owner ("containers[0]").
struct Container {
  const Json* object;
  std::string path;

  const Json& securityContext() const { return field(*object, "securityContext"); }
  std::string contextField(std::string_view key) const {
    return path + ".securityContext." + std::string(key);
  }
};

// The containers in the order Kubernetes visits them (policy/visitor.go).
std::vector<Container> containersOf(const Json& spec) {
  std::vector<Container> out;
  for (std::string_view list : {"initContainers", "containers", "ephemeralContainers"}) {
    const Json& containers = items(spec, list);
    for (std::size_t i = 0; i < containers.size(); ++i) {
      out.push_back({&containers[i], indexed(list, i)});
    }
  }
  return out;
}

class Evaluator {
public:
  Evaluator(const Json& spec, const Json& annotations)
      : spec_(spec),
        annotations_(annotations),
        pod_context_(field(spec, "securityContext")),
        containers_(containersOf(spec)) {}

  std::vector<PodSecurityViolation> run(PodSecurityLevel level) && {
    if (level == PodSecurityLevel::Privileged) {
      return {};
    }
    const bool restricted = level == PodSecurityLevel::Restricted;
    hostProcess();
    hostNamespaces();
    privileged();
    hostPorts();
    appArmor();
    seLinux();
    sysctls();
    hostProbes();
    if (!restricted) {  // restricted replaces these four with stricter checks
      capabilitiesBaseline();
      hostPathVolumes();
      seccompBaseline();
      procMount(/*relax_for_user_namespaces=*/true);
      return std::move(violations_);
    }
    restrictedVolumes();
    allowPrivilegeEscalation();
    runAsNonRoot();
    runAsUser();
    seccompRestricted();
    capabilitiesRestricted();
    procMount(/*relax_for_user_namespaces=*/false);
    return std::move(violations_);
  }

private:
  void add(std::string_view check, std::string field_path, std::string reason) {
    violations_.push_back({std::string(check), std::move(field_path), std::move(reason)});
  }

  // hostUsers: false, a Pod in a user namespace (relaxPolicyForUserNamespacePod, v1.35).
  bool userNamespaced() const { return flag(spec_, "hostUsers") == false; }
  // spec.os.name windows: exempt from three restricted checks since v1.25.
  bool windows() const { return text(field(spec_, "os"), "name") == "windows"; }

  // The Pod's securityContext and each container's, with the path of the context.
  template <typename Visit>
  void eachContext(Visit visit) const {
    visit(pod_context_, std::string("securityContext"));
    for (const Container& c : containers_) {
      visit(c.securityContext(), c.path + ".securityContext");
    }
  }

  // --- baseline ---------------------------------------------------------------------------

  void hostProcess() {
    eachContext([&](const Json& context, const std::string& path) {
      if (flag(field(context, "windowsOptions"), "hostProcess") == true) {
        add("windowsHostProcess", path + ".windowsOptions.hostProcess",
            "Windows HostProcess containers are forbidden");
      }
    });
  }

  void hostNamespaces() {
    for (std::string_view key : {"hostNetwork", "hostPID", "hostIPC"}) {
      if (flag(spec_, key) == true) {
        add("hostNamespaces", std::string(key), "sharing the host's namespaces is forbidden");
      }
    }
  }

  void privileged() {
    for (const Container& c : containers_) {
      if (flag(c.securityContext(), "privileged") == true) {
        add("privileged", c.contextField("privileged"), "privileged containers are forbidden");
      }
    }
  }

  void capabilitiesBaseline() {
    for (const Container& c : containers_) {
      const Json& added = items(field(c.securityContext(), "capabilities"), "add");
      for (std::size_t j = 0; j < added.size(); ++j) {
        const std::string name = added[j].is_string() ? added[j].get<std::string>() : "";
        if (!isOneOf(kBaselineCapabilities, name)) {
          add("capabilities_baseline", indexed(c.contextField("capabilities.add"), j),
              "capability " + inQuotes(name) + " is beyond the baseline set");
        }
      }
    }
  }

  void hostPathVolumes() {
    const Json& volumes = items(spec_, "volumes");
    for (std::size_t k = 0; k < volumes.size(); ++k) {
      if (!field(volumes[k], "hostPath").is_null()) {
        add("hostPathVolumes", indexed("volumes", k) + ".hostPath",
            "hostPath volumes are forbidden");
      }
    }
  }

  void hostPorts() {
    for (const Container& c : containers_) {
      const Json& ports = items(*c.object, "ports");
      for (std::size_t j = 0; j < ports.size(); ++j) {
        const Json& host_port = field(ports[j], "hostPort");
        if (host_port.is_number_integer() && host_port.get<std::int64_t>() != 0) {
          add("hostPorts", indexed(c.path + ".ports", j) + ".hostPort", "host ports are forbidden");
        }
      }
    }
  }

  void appArmor() {
    eachContext([&](const Json& context, const std::string& path) {
      const Json& profile = field(context, "appArmorProfile");
      if (!profile.is_null() && !isOneOf(kProfileTypes, text(profile, "type"))) {
        add("appArmorProfile", path + ".appArmorProfile.type",
            "AppArmor profile " + inQuotes(text(profile, "type")) +
                " is forbidden: RuntimeDefault or Localhost");
      }
    });
    if (!annotations_.is_object()) {
      return;
    }
    for (auto it = annotations_.begin(); it != annotations_.end(); ++it) {
      const std::string value = it->is_string() ? it->get<std::string>() : "";
      if (it.key().starts_with(kAppArmorAnnotationPrefix) && !value.empty() &&
          value != "runtime/default" && !value.starts_with("localhost/")) {
        add("appArmorProfile", "metadata.annotations[" + it.key() + "]",
            "AppArmor profile " + inQuotes(value) +
                " is forbidden: runtime/default or localhost/*");
      }
    }
  }

  void seLinux() {
    eachContext([&](const Json& context, const std::string& path) {
      const Json& options = field(context, "seLinuxOptions");
      if (!isOneOf(kSELinuxTypes, text(options, "type"))) {
        add("seLinuxOptions", path + ".seLinuxOptions.type",
            "SELinux type " + inQuotes(text(options, "type")) +
                " is forbidden: container_t, container_init_t, container_kvm_t or "
                "container_engine_t");
      }
      for (std::string_view key : {"user", "role"}) {
        if (!text(options, key).empty()) {
          add("seLinuxOptions", path + ".seLinuxOptions." + std::string(key),
              "a custom SELinux " + std::string(key) + " is forbidden");
        }
      }
    });
  }

  void procMount(bool relax_for_user_namespaces) {
    if (relax_for_user_namespaces && userNamespaced()) {
      return;
    }
    for (const Container& c : containers_) {
      const Json& mount = field(c.securityContext(), "procMount");
      if (mount.is_string() && mount.get<std::string>() != "Default") {
        add(relax_for_user_namespaces ? "procMount" : "procMount_restricted",
            c.contextField("procMount"),
            "procMount " + inQuotes(mount.get<std::string>()) + " is forbidden: Default");
      }
    }
  }

  void seccompBaseline() {
    eachContext([&](const Json& context, const std::string& path) {
      const Json& profile = field(context, "seccompProfile");
      if (!profile.is_null() && !isOneOf(kProfileTypes, text(profile, "type"))) {
        add("seccompProfile_baseline", path + ".seccompProfile.type",
            "seccomp profile " + inQuotes(text(profile, "type")) +
                " is forbidden: RuntimeDefault or Localhost");
      }
    });
  }

  void sysctls() {
    const Json& sysctls = items(pod_context_, "sysctls");
    for (std::size_t j = 0; j < sysctls.size(); ++j) {
      const std::string name = text(sysctls[j], "name");
      if (!isOneOf(kSafeSysctls, name)) {
        add("sysctls", indexed("securityContext.sysctls", j) + ".name",
            "sysctl " + name + " is not in the safe set");
      }
    }
  }

  // A host on probes and lifecycle handlers (hostProbesAndHostLifecycle, v1.34).
  void hostProbes() {
    for (const Container& c : containers_) {
      for (std::string_view probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
        handlerHost(field(*c.object, probe), at(c.path, probe));
      }
      const Json& lifecycle = field(*c.object, "lifecycle");
      for (std::string_view hook : {"postStart", "preStop"}) {
        handlerHost(field(lifecycle, hook), c.path + ".lifecycle." + std::string(hook));
      }
    }
  }
  void handlerHost(const Json& handler, const std::string& path) {
    for (std::string_view action : {"httpGet", "tcpSocket"}) {
      if (!text(field(handler, action), "host").empty()) {
        add("hostProbesAndHostLifecycle", path + "." + std::string(action) + ".host",
            "a probe or lifecycle handler may not name a host");
      }
    }
  }

  // --- restricted -------------------------------------------------------------------------

  void restrictedVolumes() {
    const Json& volumes = items(spec_, "volumes");
    for (std::size_t k = 0; k < volumes.size(); ++k) {
      std::string type;
      bool allowed = false;
      for (auto it = volumes[k].begin(); volumes[k].is_object() && it != volumes[k].end(); ++it) {
        if (it.key() != "name" && !it->is_null()) {
          allowed = allowed || isOneOf(kRestrictedVolumeTypes, it.key());
          type = type.empty() ? it.key() : type;
        }
      }
      if (!allowed) {
        add("restrictedVolumes",
            type.empty() ? indexed("volumes", k) : indexed("volumes", k) + "." + type,
            "volume type " + (type.empty() ? std::string("(none)") : type) +
                " is forbidden: configMap, csi, downwardAPI, emptyDir, ephemeral, image, "
                "persistentVolumeClaim, projected or secret");
      }
    }
  }

  void allowPrivilegeEscalation() {
    if (windows()) {
      return;
    }
    for (const Container& c : containers_) {
      if (flag(c.securityContext(), "allowPrivilegeEscalation") != false) {
        add("allowPrivilegeEscalation", c.contextField("allowPrivilegeEscalation"),
            "must be false");
      }
    }
  }

  // runAsNonRoot true on the Pod or on every container; false anywhere is refused.
  void runAsNonRoot() {
    if (userNamespaced()) {
      return;
    }
    const std::optional<bool> pod = flag(pod_context_, "runAsNonRoot");
    if (pod == false) {
      add("runAsNonRoot", "securityContext.runAsNonRoot", "must not be false");
    }
    for (const Container& c : containers_) {
      const std::optional<bool> own = flag(c.securityContext(), "runAsNonRoot");
      if (own == false) {
        add("runAsNonRoot", c.contextField("runAsNonRoot"), "must not be false");
      } else if (!own && pod != true) {
        add("runAsNonRoot", c.contextField("runAsNonRoot"),
            "must be true, here or in the Pod's securityContext");
      }
    }
  }

  void runAsUser() {
    if (userNamespaced()) {
      return;
    }
    eachContext([&](const Json& context, const std::string& path) {
      const Json& user = field(context, "runAsUser");
      if (user.is_number_integer() && user.get<std::int64_t>() == 0) {
        add("runAsUser", path + ".runAsUser", "must not be 0 (root)");
      }
    });
  }

  // seccompProfile.type RuntimeDefault or Localhost on the Pod or on every container.
  void seccompRestricted() {
    if (windows()) {
      return;
    }
    const Json& pod = field(pod_context_, "seccompProfile");
    const bool pod_set = !pod.is_null() && isOneOf(kProfileTypes, text(pod, "type"));
    if (!pod.is_null() && !pod_set) {
      add("seccompProfile_restricted", "securityContext.seccompProfile.type",
          "must be RuntimeDefault or Localhost");
    }
    for (const Container& c : containers_) {
      const Json& own = field(c.securityContext(), "seccompProfile");
      if (!own.is_null() && !isOneOf(kProfileTypes, text(own, "type"))) {
        add("seccompProfile_restricted", c.contextField("seccompProfile.type"),
            "must be RuntimeDefault or Localhost");
      } else if (own.is_null() && !pod_set) {
        add("seccompProfile_restricted", c.contextField("seccompProfile.type"),
            "must be RuntimeDefault or Localhost, here or in the Pod's securityContext");
      }
    }
  }

  void capabilitiesRestricted() {
    if (windows()) {
      return;
    }
    for (const Container& c : containers_) {
      const Json& capabilities = field(c.securityContext(), "capabilities");
      const Json& dropped = items(capabilities, "drop");
      if (std::find(dropped.begin(), dropped.end(), Json("ALL")) == dropped.end()) {
        add("capabilities_restricted", c.contextField("capabilities.drop"), "must include ALL");
      }
      const Json& added = items(capabilities, "add");
      for (std::size_t j = 0; j < added.size(); ++j) {
        if (added[j] != Json("NET_BIND_SERVICE")) {
          add("capabilities_restricted", indexed(c.contextField("capabilities.add"), j),
              "only NET_BIND_SERVICE may be added");
        }
      }
    }
  }

  const Json& spec_;
  const Json& annotations_;
  const Json& pod_context_;
  std::vector<Container> containers_;
  std::vector<PodSecurityViolation> violations_;
};

}  // namespace

std::string_view podSecurityLevelName(PodSecurityLevel level) {
  switch (level) {
    case PodSecurityLevel::Privileged:
      return "privileged";
    case PodSecurityLevel::Baseline:
      return "baseline";
    case PodSecurityLevel::Restricted:
      return "restricted";
  }
  return "restricted";
}

PodSecurityLevel enforcedPodSecurityLevel(const std::map<std::string, std::string>& labels) {
  const auto found = labels.find(std::string(kPodSecurityEnforceLabel));
  if (found == labels.end()) {
    return PodSecurityLevel::Privileged;
  }
  for (PodSecurityLevel level :
       {PodSecurityLevel::Privileged, PodSecurityLevel::Baseline, PodSecurityLevel::Restricted}) {
    if (found->second == podSecurityLevelName(level)) {
      return level;
    }
  }
  return PodSecurityLevel::Restricted;
}

std::vector<PodSecurityViolation> evaluatePodSecurity(const Json& pod_spec, PodSecurityLevel level,
                                                      const Json& annotations) {
  return Evaluator(pod_spec, annotations).run(level);
}

}  // namespace kvc::policy
