#include "kvc/policy/admission/backend_admission.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "kvc/api/backend.h"
#include "kvc/api/message.h"
#include "kvc/api/pool.h"
#include "kvc/api/settings.h"
#include "kvc/common/quantity.h"
#include "kvc/policy/admission/kube_syntax.h"
#include "kvc/policy/base/text.h"
#include "kvc/policy/store/store_image.h"
#include "kvc/policy/store/store_workload.h"

namespace kvc::policy {
namespace {

constexpr std::string_view kConnection = "spec.connection";
constexpr std::string_view kLeader = "spec.connection.managed.leader";
constexpr std::string_view kMembers = "spec.connection.managed.members";
constexpr std::string_view kEndpoints = "spec.connection.external.endpoints";
// JSON pointers under `spec`.
constexpr std::string_view kLeaderAt = "/connection/managed/leader";
constexpr std::string_view kMembersAt = "/connection/managed/members";
constexpr std::string_view kEndpointsAt = "/connection/external/endpoints";

constexpr std::size_t kMaxImageLength = 512;
constexpr std::size_t kMaxPullSecrets = 32;
constexpr std::size_t kMaxGroups = 32;
constexpr std::size_t kMaxHostPaths = 32;
constexpr std::size_t kMaxHostPathLength = 1024;
constexpr std::size_t kMaxTierPathLength = 4096;
constexpr std::size_t kMaxAddressLength = 259;
constexpr std::int64_t kMaxLeaderReplicas = 5;
constexpr std::int64_t kMaxGracePeriodSeconds = 3600;
constexpr std::int64_t kTierMinimumBytes = 16 * 1024 * 1024;  // one bucket of the tier
constexpr std::int64_t kTierMinimumKeys = 64;
constexpr std::string_view kInfiniband = "/dev/infiniband";

constexpr std::string_view kSnapshotReason =
    "the store's snapshot is not offered, because restoring a snapshot can make the cache serve "
    "another key's bytes instead of a miss";

// ---------------------------------------------------------------------------------------------
// §3.6 reservation tables. A Derived key is rendered from a field (so a second value would mean
// two sources); a Forbidden one has a silent or global effect. Each says why.

enum class Reserved { Derived, Forbidden };

struct Reservation {
  Reserved kind;
  std::string_view why;  // Derived: where the operator takes it from; Forbidden: the reason
};

using ReservationTable = std::map<std::string_view, Reservation, std::less<>>;

const ReservationTable& leaderArgs() {
  static const ReservationTable kTable = [] {
    ReservationTable t;
    auto derived = [&](std::initializer_list<std::string_view> keys, std::string_view why) {
      for (std::string_view key : keys) {
        t[key] = {Reserved::Derived, why};
      }
    };
    auto forbidden = [&](std::initializer_list<std::string_view> keys, std::string_view why) {
      for (std::string_view key : keys) {
        t[key] = {Reserved::Forbidden, why};
      }
    };
    derived({"allocation_strategy"}, "leader.allocationStrategy (set that field instead)");
    derived({"cluster_id"}, "the backend itself (one store cluster per KVCacheBackend)");
    derived({"metrics_port", "rpc_port"},
            "the fixed ports the leader Service, the probes and the members use (rpc 50051, "
            "admin 9003, served by the leader's launcher in front of the master's 9013)");
    derived({"metrics_host"},
            "the leader's launcher, which keeps the master's admin listener on the Pod's "
            "loopback and serves the admin API over mutual TLS (docs/security.md)");
    derived({"rpc_address", "rpc_interface"},
            "the Pod's network, where the members and the leader Service reach the master");
    derived({"enable_ha", "ha_backend_connstring", "ha_backend_type", "pod_name", "pod_namespace"},
            "leader.electionBackend (the leader's launcher holds the Lease)");
    derived({"enable_offload", "offload_on_evict"},
            "members[].localDisks (a group's disk tier turns them on)");
    derived({"enable_multi_tenants", "tenant_quota_connector_uri"},
            "leader.multiTenancy and the tenant quota policy the operator keeps");
    derived({"enable_snapshot", "enable_snapshot_restore", "snapshot_interval_seconds",
             "snapshot_object_store_type", "snapshot_retention_count"},
            kSnapshotReason);
    forbidden({"enable_oplog"},
              "the operation log needs the etcd HA backend, and the store image elects through a "
              "Lease, so the master would crash at start");
    forbidden({"config_path"},
              "a configuration file makes every other flag on the command line inert, the "
              "derived ones included");
    forbidden({"tenant_quota_connector_type"},
              "a quota source other than the file the operator seeds would leave the tenant "
              "quota policy unread");
    forbidden({"enable_cxl"},
              "it silently replaces the allocation strategy and advertises capacity that no "
              "member backs");
    forbidden({"cxl_path", "cxl_size"}, "it does nothing without -enable_cxl, which is refused");
    forbidden({"port"}, "it is a deprecated alias of -rpc_port, which the operator sets");
    forbidden({"etcd_endpoints"},
              "only the etcd HA backend reads it, and that backend is not built into the image");
    forbidden({"memory_allocator"}, "another allocator silently turns snapshot generation off");
    forbidden(
        {"snapshot_backup_dir", "snapshot_payload_store_type", "snapshot_payload_backend_type",
         "snapshot_catalog_store_type", "snapshot_catalog_backend_type",
         "snapshot_catalog_store_connstring", "snapshot_catalog_backend_connstring"},
        kSnapshotReason);
    return t;
  }();
  return kTable;
}

const ReservationTable& leaderEnv() {
  static const ReservationTable kTable = {
      {"KUBERNETES_POD_IP", {Reserved::Derived, "the Pod's identity, which the election reads"}},
      {"KUBERNETES_POD_NAME", {Reserved::Derived, "the Pod's identity, which the election reads"}},
      {"KUBERNETES_POD_NAMESPACE",
       {Reserved::Derived, "the Pod's identity, which the election reads"}},
      {"MOONCAKE_SNAPSHOT_LOCAL_PATH", {Reserved::Derived, kSnapshotReason}},
  };
  return kTable;
}

const ReservationTable& memberArgs() {
  static const ReservationTable kTable = {
      {"enable_ssd_offload", {Reserved::Derived, "the group's localDisks"}},
      {"ssd_offload_path", {Reserved::Derived, "the group's localDisks"}},
      {"global_segment_size", {Reserved::Derived, "the group's capacityPerMember"}},
      {"local_buffer_size", {Reserved::Derived, "the group's localBufferSize"}},
      {"local_hostname", {Reserved::Derived, "the member Pod's IP"}},
      {"master_server_address",
       {Reserved::Derived, "the leader Service or Lease (leader.memberAddressing)"}},
      {"metadata_server", {Reserved::Derived, "the store's fixed P2PHANDSHAKE metadata plane"}},
      {"protocol", {Reserved::Derived, "the group's transport.protocol (or spec.transport)"}},
  };
  return kTable;
}

const ReservationTable& memberEnv() {
  static const ReservationTable kTable = [] {
    ReservationTable t = {
        {"MOONCAKE_GLOBAL_SEGMENT_SIZE", {Reserved::Derived, "the group's capacityPerMember"}},
        {"MOONCAKE_LOCAL_BUFFER_SIZE", {Reserved::Derived, "the group's localBufferSize"}},
        {"MOONCAKE_LOCAL_HOSTNAME", {Reserved::Derived, "the member Pod's IP"}},
        {"MOONCAKE_MASTER",
         {Reserved::Derived, "the leader Service or Lease (leader.memberAddressing)"}},
        {"MOONCAKE_TE_META_DATA_SERVER",
         {Reserved::Derived, "the store's fixed P2PHANDSHAKE metadata plane"}},
        {"MOONCAKE_PROTOCOL",
         {Reserved::Derived, "the group's transport.protocol (or spec.transport)"}},
        {"MC_TE_METRIC",
         {Reserved::Derived, "a constant (the transfer engine's metrics, which the status reads)"}},
    };
    for (std::string_view name :
         {"MOONCAKE_OFFLOAD_ENABLED", "MOONCAKE_OFFLOAD_FILE_STORAGE_PATH",
          "MOONCAKE_OFFLOAD_BUCKET_SIZE_LIMIT_BYTES", "MOONCAKE_OFFLOAD_BUCKET_KEYS_LIMIT",
          "MOONCAKE_OFFLOAD_TOTAL_SIZE_LIMIT_BYTES", "MOONCAKE_OFFLOAD_BUCKET_MAX_TOTAL_SIZE",
          "MOONCAKE_OFFLOAD_TOTAL_KEYS_LIMIT", "MOONCAKE_OFFLOAD_BUCKET_EVICTION_POLICY",
          "MOONCAKE_OFFLOAD_ENABLE_DISK_WATERMARK_EVICTION",
          "MOONCAKE_OFFLOAD_DISK_EVICTION_HIGH_WATERMARK_RATIO",
          "MOONCAKE_OFFLOAD_DISK_EVICTION_LOW_WATERMARK_RATIO"}) {
      t[name] = {Reserved::Derived,
                 "the group's localDisks (the bucket limits are operator constants)"};
    }
    for (std::string_view name :
         {"AMD_VISIBLE_DEVICES", "CAMBRICON_VISIBLE_DEVICES", "IX_VISIBLE_DEVICES",
          "MTHREADS_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"}) {
      t[name] = {Reserved::Derived, "the group's medium (a DRAM member sees no accelerator)"};
    }
    return t;
  }();
  return kTable;
}

// `<what> is <derived from …|refused: …>; remove it from <list>`.
std::string reservedDetail(std::string_view what, const Reservation& reservation,
                           std::string_view list) {
  const bool snapshot = reservation.why == kSnapshotReason;
  std::string out(what);
  if (snapshot) {
    out += " is refused: " + std::string(kSnapshotReason);
  } else if (reservation.kind == Reserved::Derived) {
    out += " is set by the operator from " + std::string(reservation.why) +
           ", so a second value would mean two sources";
  } else {
    out += " is refused: " + std::string(reservation.why);
  }
  return out + "; remove it from " + std::string(list);
}

// ---------------------------------------------------------------------------------------------
// Raw JSON.

// Equal values, objects compared without regard to key order (the decoder keeps the order the
// client wrote).
bool sameValue(const Json& a, const Json& b) {
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) {
      return false;
    }
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !sameValue(it.value(), *other)) {
        return false;
      }
    }
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) {
      return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!sameValue(a[i], b[i])) {
        return false;
      }
    }
    return true;
  }
  return a == b;
}

// The value at a JSON pointer ("/connection/managed/members/0/image"), or null when a step is
// missing or of another type.
const Json& rawAt(const Json& root, std::string_view pointer) {
  static const Json kNull;
  const Json* at = &root;
  std::size_t start = 1;
  while (start <= pointer.size() && !pointer.empty()) {
    const std::size_t slash = pointer.find('/', start);
    const std::string step(
        pointer.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (at->is_object()) {
      auto it = at->find(step);
      if (it == at->end()) {
        return kNull;
      }
      at = &*it;
    } else if (at->is_array() && !step.empty() &&
               std::all_of(step.begin(), step.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      const std::size_t index = std::stoul(step);
      if (index >= at->size()) {
        return kNull;
      }
      at = &(*at)[index];
    } else {
      return kNull;
    }
    if (slash == std::string_view::npos) {
      break;
    }
    start = slash + 1;
  }
  return *at;
}

std::string indexed(std::string_view field, std::size_t i) {
  return std::string(field) + "[" + std::to_string(i) + "]";
}

std::string pointer(std::string_view base, std::size_t i, std::string_view rest = {}) {
  std::string out = std::string(base) + "/" + std::to_string(i);
  if (!rest.empty()) {
    out += "/" + std::string(rest);
  }
  return out;
}

// A quantity's text as written: a string, or an integer's digits.
std::optional<std::string> quantityText(const Json& value) {
  if (value.is_string()) {
    return value.get<std::string>();
  }
  if (value.is_number_integer()) {
    return value.dump();
  }
  return std::nullopt;
}

bool blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

bool hasSpace(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

// The field a decoder message starts with ("spec.x.y must be …", "spec.x.y: quantity …"), and
// the rest as the detail.
FieldError decodeError(const Status& status) {
  const std::string& message = status.message();
  const std::size_t end = message.find_first_of(" :");
  std::string field = message.substr(0, end);
  std::string detail = end == std::string::npos ? message : message.substr(end);
  detail.erase(0, detail.find_first_not_of(": "));
  if (field.rfind("spec", 0) != 0 && field.rfind("metadata", 0) != 0 &&
      field.rfind("status", 0) != 0) {
    field = "spec";
    detail = message;
  }
  return {FieldErrorType::Invalid, field, std::nullopt,
          detail + "; correct the field as the KVCacheBackend schema describes it"};
}

// ---------------------------------------------------------------------------------------------
// The judgement of one request.

class Judge {
public:
  Judge(const api::KVCacheBackend& backend, const Json& spec, const api::KVCacheBackend* old,
        const Json* old_spec, std::string settings_image, std::set<std::string> reported)
      : backend_(backend),
        spec_(spec),
        old_(old),
        old_spec_(old_spec),
        settings_image_(std::move(settings_image)),
        reported_(std::move(reported)) {}

  AdmissionVerdict run() && {
    image();
    pullSecrets();
    connection();
    if (backend_.spec.managed) {
      leader();
      members();
      scaleIn();
      if (verdict_.errors.empty()) {
        publishedImages();  // a refused request is told what to fix, nothing more
      }
    }
    if (backend_.spec.external) {
      endpoints();
    }
    return std::move(verdict_);
  }

private:
  void refuse(FieldErrorType type, std::string field, std::optional<std::string> value,
              std::string detail) {
    verdict_.errors.push_back({type, std::move(field), std::move(value), std::move(detail)});
  }

  bool create() const { return old_ == nullptr; }
  // The raw value at `at` (a pointer under spec) differs from the stored one; always on CREATE.
  bool changed(std::string_view at) const {
    return create() || !sameValue(rawAt(spec_, at), rawAt(*old_spec_, at));
  }
  bool oldManaged() const { return old_ != nullptr && old_->spec.managed; }
  // Group i did not run before this request: judged as created.
  bool newGroup(std::size_t i) const { return !oldManaged() || i >= old_->spec.members.size(); }
  bool groupChanged(std::size_t i, std::string_view field) const {
    return newGroup(i) || changed(pointer(kMembersAt, i, field));
  }
  bool electionChanged() const { return changed(std::string(kLeaderAt) + "/electionBackend"); }

  // -- spec.image, members[].image, the fallback ---------------------------------------------

  void imageRules(const std::string& field, const std::optional<std::string>& image,
                  std::string_view unset) {
    if (!image) {
      return;
    }
    if (blank(*image)) {
      refuse(FieldErrorType::Invalid, field, *image,
             "must not be blank; name an image, or remove the field to use " + std::string(unset));
    } else if (image->size() > kMaxImageLength) {
      refuse(FieldErrorType::Invalid, field, std::nullopt,
             "must be at most 512 characters, not " + std::to_string(image->size()));
    } else if (hasSpace(*image) || !isImageReference(*image)) {
      refuse(FieldErrorType::Invalid, field, *image,
             "is not an image reference; write [registry[:port]/]repository[:tag][@digest] "
             "with a lowercase repository, e.g. kvcache-operator/store:0.3.13.post1-cpu");
    }
  }

  void image() {
    if (!changed("/image")) {
      return;
    }
    imageRules("spec.image", backend_.spec.image,
               "the Setting " + std::string(api::kSettingBackendImage));
    if (backend_.spec.managed && !backend_.spec.image && settings_image_.empty()) {
      refuse(FieldErrorType::Required, "spec.image", std::nullopt,
             "this managed backend names no store image, and the Setting " +
                 std::string(api::kSettingBackendImage) + " in ConfigMap " +
                 std::string(api::kOperatorNamespace) + "/" + std::string(api::kSettingsConfigMap) +
                 " is empty, so the leader (and every group without its own image) would have "
                 "none; set spec.image, or set the Setting");
    }
  }

  // A published upstream store image (store_image.h) is warned of, not refused: it serves at one
  // leader replica. Said when the image, the replicas or the election change.
  void publishedImages() {
    if (settings_image_.empty()) {
      return;
    }
    const std::string setting =
        "the Setting " + std::string(api::kSettingBackendImage) + ", " + settings_image_;
    const api::LeaderSpec& leader = backend_.spec.leader;
    if (backend_.spec.image && !projectStoreImage(*backend_.spec.image, settings_image_) &&
        (changed("/image") || changed(std::string(kLeaderAt) + "/replicas") || electionChanged())) {
      std::string warning =
          "spec.image " + *backend_.spec.image +
          " is not this project's store build (its repository is not that of " + setting +
          "): the leader runs mooncake_master itself, with no election and no TLS on the "
          "master's admin port (the store's NetworkPolicy still admits only the operator to it)";
      if (electing(backend_) && leader.replicas > 1) {
        warning += ", and leader.replicas " + std::to_string(leader.replicas) +
                   " runs one replica: only this project's build can elect a leader (Step 4)";
      }
      verdict_.warnings.push_back(warning +
                                  ". Remove spec.image to run the Setting's build instead");
    }
    for (std::size_t i = 0; i < backend_.spec.members.size(); ++i) {
      const std::optional<std::string>& own = backend_.spec.members[i].image;
      if (own && !projectStoreImage(*own, settings_image_) && groupChanged(i, "image")) {
        verdict_.warnings.push_back(
            indexed(kMembers, i) + ".image " + *own + " is not this project's store build " +
            "(its repository is not that of " + setting +
            "): its members run mc_store_rest_server themselves, given the leader Service's " +
            "address, and a local disk tier's survey runs from the Setting's image");
      }
    }
  }

  void pullSecrets() {
    if (!changed("/imagePullSecrets")) {
      return;
    }
    const auto& secrets = backend_.spec.image_pull_secrets;
    if (secrets.size() > kMaxPullSecrets) {
      refuse(FieldErrorType::Invalid, "spec.imagePullSecrets", std::nullopt,
             "must list at most 32 Secrets, not " + std::to_string(secrets.size()));
    }
    for (std::size_t i = 0; i < secrets.size(); ++i) {
      const std::string field = indexed("spec.imagePullSecrets", i) + ".name";
      if (secrets[i].empty()) {
        refuse(FieldErrorType::Required, field, std::nullopt,
               "name the Secret (of type kubernetes.io/dockerconfigjson in gpustack-system) "
               "that holds the registry credentials");
      } else if (!isDns1123Subdomain(secrets[i])) {
        refuse(FieldErrorType::Invalid, field, secrets[i],
               "must be a Secret name: a DNS-1123 subdomain of at most 253 characters, "
               "lowercase letters, digits, '-' and '.', starting and ending with a letter or "
               "digit");
      }
    }
  }

  // -- spec.connection -------------------------------------------------------------------------

  static std::string_view branchName(bool managed, bool external) {
    if (managed && external) {
      return "both";
    }
    if (managed) {
      return "managed";
    }
    return external ? "external" : "neither";
  }

  void connection() {
    const bool managed = backend_.spec.managed;
    const bool external = backend_.spec.external;
    const std::string_view now = branchName(managed, external);
    const bool moved = create() || now != branchName(old_->spec.managed, old_->spec.external);
    if (!moved) {
      return;
    }
    if (managed == external) {
      refuse(FieldErrorType::Invalid, std::string(kConnection), std::nullopt,
             "exactly one of spec.connection.managed and spec.connection.external must be set, "
             "but " +
                 std::string(managed ? "both are" : "neither is") +
                 ": managed when the operator runs the store, external when it only reaches one "
                 "somebody else runs");
    } else if (!create() && old_->spec.managed != old_->spec.external) {
      refuse(FieldErrorType::Forbidden, std::string(kConnection), std::nullopt,
             "a backend cannot switch from " +
                 std::string(branchName(old_->spec.managed, old_->spec.external)) + " to " +
                 std::string(now) +
                 ": the pools and workloads on it hold the store it names; create another "
                 "KVCacheBackend instead");
    }
  }

  // -- the leader ------------------------------------------------------------------------------

  void leader() {
    const api::LeaderSpec& leader = backend_.spec.leader;
    const std::string at(kLeaderAt);
    if (changed(at + "/replicas") &&
        (leader.replicas < 1 || leader.replicas > kMaxLeaderReplicas)) {
      refuse(FieldErrorType::Invalid, std::string(kLeader) + ".replicas",
             std::to_string(leader.replicas),
             "must be between 1 and 5: one serving leader and up to four standbys");
    } else if ((changed(at + "/replicas") || electionChanged()) && leader.replicas > 1 &&
               !electing(backend_)) {
      refuse(FieldErrorType::Invalid, std::string(kLeader) + ".replicas",
             std::to_string(leader.replicas),
             "more than one leader replica needs leader.electionBackend: Kubernetes (with " +
                 leader.election_backend +
                 " nothing elects and the Deployment runs one replica); set electionBackend to "
                 "Kubernetes, or replicas to 1");
    }
    if (oldManaged() && old_->spec.multi_tenancy && !backend_.spec.multi_tenancy &&
        !old_->status.used_by.empty()) {
      std::vector<std::string> pools;
      for (const api::ObjectReference& user : old_->status.used_by) {
        pools.push_back(user.kind == api::kKindPool || user.kind.empty() ? inQuotes(user.name)
                                                                         : user.display());
      }
      refuse(FieldErrorType::Forbidden, std::string(kLeader) + ".multiTenancy", std::nullopt,
             "cannot be turned off while " +
                 std::string(pools.size() == 1 ? "KVCachePool " : "KVCachePools ") +
                 api::nameList(pools) + (pools.size() == 1 ? " uses" : " use") +
                 " this backend: their Bindings' quotas are enforced by the master's tenant "
                 "ledger, which a master without multi-tenancy does not keep; delete the pools "
                 "first, or keep multiTenancy on");
    }
    if (changed(at + "/extraArgs") || electionChanged()) {
      flagRules(std::string(kLeader) + ".extraArgs", "leader.extraArgs", leader.extra_args,
                leaderArgs(), false);
    }
    if (changed(at + "/extraEnv") || electionChanged()) {
      envRules(std::string(kLeader) + ".extraEnv", "leader.extraEnv", leader.extra_env,
               leaderEnv());
    }
  }

  // -- extraArgs and extraEnv (§3.6) -----------------------------------------------------------

  // Leader entries are `-flag` or `-flag=value`; member entries `-key=value` (needs_value).
  // `list` is how a message names the list ("leader.extraArgs", "members[1].extraArgs").
  void flagRules(const std::string& field, std::string_view list,
                 const std::vector<std::string>& entries, const ReservationTable& table,
                 bool needs_value) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const std::string& entry = entries[i];
      const std::size_t dashes = entry.rfind("--", 0) == 0 ? 2 : entry.rfind('-', 0) == 0 ? 1 : 0;
      const std::size_t equals = entry.find('=');
      const std::string key =
          entry.substr(dashes, equals == std::string::npos ? std::string::npos : equals - dashes);
      const bool well_formed = dashes > 0 && !key.empty() && key.front() != '-' && !hasSpace(key) &&
                               (!needs_value || equals != std::string::npos);
      if (!well_formed) {
        refuse(FieldErrorType::Invalid, indexed(field, i), entry,
               needs_value
                   ? "must be one -key=value entry (rendered as -D key=value), e.g. "
                     "-device_name=mlx5_0"
                   : "must be one -flag or -flag=value entry, e.g. -default_kv_lease_ttl=10m");
        continue;
      }
      if (auto it = table.find(key); it != table.end()) {
        refuse(FieldErrorType::Forbidden, indexed(field, i), std::nullopt,
               reservedDetail(inQuotes(entry) + " sets -" + key + ", which", it->second, list));
      }
    }
  }

  void envRules(const std::string& field, std::string_view list, const Json& entries,
                const ReservationTable& table) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const Json& name = rawAt(entries[i], "/name");
      if (!name.is_string() || name.get<std::string>().empty()) {
        refuse(FieldErrorType::Required, indexed(field, i) + ".name", std::nullopt,
               "every extraEnv entry names its variable");
        continue;
      }
      const std::string text = name.get<std::string>();
      if (auto it = table.find(text); it != table.end()) {
        refuse(FieldErrorType::Forbidden, indexed(field, i) + ".name", std::nullopt,
               reservedDetail(text, it->second, list));
      }
    }
  }

  // -- member groups ---------------------------------------------------------------------------

  void members() {
    const auto& groups = backend_.spec.members;
    const std::size_t old_count = oldManaged() ? old_->spec.members.size() : 0;
    if ((!oldManaged() || groups.size() != old_count) &&
        (groups.empty() || groups.size() > kMaxGroups)) {
      refuse(FieldErrorType::Invalid, std::string(kMembers), std::nullopt,
             "must list between 1 and 32 member groups, not " + std::to_string(groups.size()));
    }
    if (!oldManaged() || groups.size() > old_count) {
      renderedNames();
    }
    const std::set<std::size_t> moved = reordered();
    tierCount();
    for (std::size_t i = 0; i < groups.size(); ++i) {
      group(i, moved.count(i) > 0);
    }
  }

  void renderedNames() {
    const std::string& b = backend_.metadata.name;
    std::vector<std::pair<std::string, std::string>> names = {
        {leaderName(b), "the leader Deployment and Service"}};
    for (std::size_t i = 0; i < backend_.spec.members.size(); ++i) {
      names.emplace_back(memberGroupName(b, static_cast<int>(i)),
                         "the DaemonSet of member group " + std::to_string(i));
    }
    for (const auto& [name, what] : names) {
      if (isDns1035Label(name)) {
        continue;
      }
      const std::size_t room = 63 - (names.back().first.size() - b.size());
      const bool spelled =
          !b.empty() && b.front() >= 'a' && b.front() <= 'z' && b.find('.') == std::string::npos;
      refuse(FieldErrorType::Invalid, "metadata.name", b,
             "the rendered name " + inQuotes(name) + " (" + what +
                 ") must be a DNS-1035 label: at most 63 characters of lowercase letters, "
                 "digits and '-', starting with a letter, no dots; " +
                 (spelled ? "shorten the backend's name to at most " + std::to_string(room) +
                                " characters"
                          : "name the backend with a letter first and no dots, in at most " +
                                std::to_string(room) + " characters"));
      return;
    }
  }

  // The positions whose group is one that stood at another position before (same nodeSelector
  // and medium), each reported naming both positions.
  std::set<std::size_t> reordered() {
    std::set<std::size_t> out;
    if (!oldManaged()) {
      return out;
    }
    const auto& now = backend_.spec.members;
    const auto& before = old_->spec.members;
    auto same = [](const api::MemberGroup& a, const api::MemberGroup& b) {
      return a.medium == b.medium && sameValue(a.node_selector, b.node_selector);
    };
    // A stored group is still in place when the same position holds the same group.
    auto in_place = [&](std::size_t j) { return j < now.size() && same(now[j], before[j]); };
    for (std::size_t i = 0; i < now.size(); ++i) {
      if (i < before.size() && same(now[i], before[i])) {
        continue;
      }
      for (std::size_t j = 0; j < before.size(); ++j) {
        if (j != i && !in_place(j) && same(now[i], before[j])) {
          out.insert(i);
          refuse(FieldErrorType::Forbidden, indexed(kMembers, i), std::nullopt,
                 "the group at position " + std::to_string(j) + " (" +
                     memberGroupName(backend_.metadata.name, static_cast<int>(j)) +
                     ") moved to position " + std::to_string(i) +
                     ": a group's position is its identity (its DaemonSet and member port), so "
                     "groups cannot be reordered; append new groups at the end, remove groups "
                     "from the end, or edit a group in place");
          break;
        }
      }
    }
    return out;
  }

  void tierCount() {
    std::vector<std::string> with_tier;
    std::vector<std::string> old_with_tier;
    for (std::size_t i = 0; i < backend_.spec.members.size(); ++i) {
      if (backend_.spec.members[i].local_disk) {
        with_tier.push_back(std::to_string(i));
      }
    }
    if (oldManaged()) {
      for (std::size_t i = 0; i < old_->spec.members.size(); ++i) {
        if (old_->spec.members[i].local_disk) {
          old_with_tier.push_back(std::to_string(i));
        }
      }
    }
    if (with_tier.size() > 1 && (!oldManaged() || with_tier != old_with_tier)) {
      refuse(FieldErrorType::Invalid, std::string(kMembers), std::nullopt,
             "at most one member group may declare localDisks (status.capacity reports one "
             "tier), but groups " +
                 api::nameList(with_tier) +
                 " do; keep the tier in one group, or create another backend for the other");
    }
  }

  void group(std::size_t i, bool moved) {
    const api::MemberGroup& g = backend_.spec.members[i];
    const std::string field = indexed(kMembers, i);
    const api::MemberGroup* before = newGroup(i) || moved ? nullptr : &old_->spec.members[i];
    if (before != nullptr && before->medium != g.medium) {
      refuse(FieldErrorType::Forbidden, field + ".medium", std::nullopt,
             "the medium of a running group is immutable (" + before->medium + " -> " + g.medium +
                 "): a mounted segment cannot change kind; append a group with the new medium "
                 "at the end, and remove this one from the end if it is the last");
    }
    if (groupChanged(i, "nodeSelector")) {
      nodeSelectorRules(field + ".nodeSelector", g.node_selector);
    }
    if (groupChanged(i, "capacityPerMember") &&
        reported_.count(field + ".capacityPerMember") == 0) {
      if (g.capacity_per_member.empty()) {
        refuse(FieldErrorType::Required, field + ".capacityPerMember", std::nullopt,
               "state the bytes each member contributes, e.g. 8Gi");
      } else if (auto error =
                     byteQuantityError(field + ".capacityPerMember", g.capacity_per_member,
                                       g.local_disk ? kTierMinimumBytes : 1,
                                       g.local_disk ? "must be at least 16Mi when the group "
                                                      "declares a local disk tier (one bucket "
                                                      "of the tier is 16Mi)"
                                                    : "")) {
        refuse(error->type, error->field, error->value, error->detail);
      }
    }
    if (groupChanged(i, "image")) {
      imageRules(field + ".image", g.image, "spec.image");
    }
    fabric(i);
    if (groupChanged(i, "extraArgs") || electionChanged()) {
      flagRules(field + ".extraArgs", indexed("members", i) + ".extraArgs", g.extra_args,
                memberArgs(), true);
    }
    if (groupChanged(i, "extraEnv") || electionChanged()) {
      envRules(field + ".extraEnv", indexed("members", i) + ".extraEnv", g.extra_env, memberEnv());
    }
    if (groupChanged(i, "runtimeClassName") && g.runtime_class_name &&
        !isDns1123Subdomain(*g.runtime_class_name)) {
      refuse(FieldErrorType::Invalid, field + ".runtimeClassName", *g.runtime_class_name,
             "must name a RuntimeClass: a DNS subdomain of at most 253 characters, lowercase "
             "letters, digits, '-' and '.'");
    }
    if (groupChanged(i, "hostPaths") || groupChanged(i, "localDisks")) {
      hostPathRules(i);
    }
    tierRules(i, before);
  }

  void nodeSelectorRules(const std::string& field, const Json& selector) {
    for (auto it = selector.begin(); it != selector.end(); ++it) {
      const std::string at = field + "[" + it.key() + "]";
      if (!isQualifiedName(it.key())) {
        refuse(FieldErrorType::Invalid, field, it.key(),
               "a node label key must be a qualified name: an optional DNS subdomain prefix and "
               "'/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with "
               "a letter or digit (e.g. kubernetes.io/os)");
      }
      if (!it.value().is_string()) {
        refuse(FieldErrorType::Invalid, at, it.value().dump(),
               "a node label value is a string; quote it (e.g. \"true\")");
      } else if (!isLabelValue(it.value().get<std::string>())) {
        refuse(FieldErrorType::Invalid, at, it.value().get<std::string>(),
               "must be a label value: empty, or at most 63 letters, digits, '-', '_' or '.', "
               "starting and ending with a letter or digit");
      }
    }
  }

  void fabric(std::size_t i) {
    const api::MemberGroup& g = backend_.spec.members[i];
    const std::string field = indexed(kMembers, i) + ".fabricInterfaceCount";
    if (groupChanged(i, "fabricInterfaceCount") && g.fabric_interface_count < 1) {
      refuse(FieldErrorType::Invalid, field, std::to_string(g.fabric_interface_count),
             "must be at least 1");
      return;
    }
    const bool judged = groupChanged(i, "fabricInterfaceCount") || groupChanged(i, "transport") ||
                        changed("/transport");
    const std::string protocol = groupProtocol(backend_, static_cast<int>(i));
    if (judged && g.fabric_interface_count > 1 && protocol != "rdma" && protocol != "efa") {
      verdict_.warnings.push_back(
          field + " is " + std::to_string(g.fabric_interface_count) +
          ", but the group's transport is " + protocol +
          ": the count of host-fabric interfaces matters for RDMA and EFA only and is ignored "
          "otherwise");
    }
  }

  void hostPathRules(std::size_t i) {
    const api::MemberGroup& g = backend_.spec.members[i];
    const std::string field = indexed(kMembers, i) + ".hostPaths";
    if (g.host_paths.size() > kMaxHostPaths) {
      refuse(FieldErrorType::Invalid, field, std::nullopt,
             "must list at most 32 host paths, not " + std::to_string(g.host_paths.size()));
    }
    std::map<std::string, std::size_t> mounts;
    for (std::size_t j = 0; j < g.host_paths.size(); ++j) {
      const Json& entry = g.host_paths[j];
      const std::string at = indexed(field, j);
      for (std::string_view key : {"path", "mountPath"}) {
        const Json& value = rawAt(entry, "/" + std::string(key));
        const std::string where = at + "." + std::string(key);
        if (!value.is_string() || value.get<std::string>().empty()) {
          refuse(FieldErrorType::Required, where, std::nullopt,
                 "every host path names its path and its mountPath, both absolute");
          continue;
        }
        const std::string path = value.get<std::string>();
        if (path.size() > kMaxHostPathLength) {
          refuse(FieldErrorType::Invalid, where, std::nullopt,
                 "must be at most 1024 characters, not " + std::to_string(path.size()));
        } else if (!absoluteComponents(path)) {
          refuse(FieldErrorType::Invalid, where, path,
                 "must be an absolute path of non-empty components with no trailing '/', "
                 "e.g. /var/run/mooncake");
        } else if (key == "mountPath") {
          mountPathRules(i, where, path, mounts, j);
        }
      }
    }
  }

  static bool absoluteComponents(std::string_view path) {
    if (path.size() < 2 || path.front() != '/' || path.back() == '/') {
      return false;
    }
    return path.find("//") == std::string_view::npos;
  }

  void mountPathRules(std::size_t i, const std::string& where, const std::string& path,
                      std::map<std::string, std::size_t>& mounts, std::size_t j) {
    const api::MemberGroup& g = backend_.spec.members[i];
    if (auto [it, inserted] = mounts.emplace(path, j); !inserted) {
      refuse(FieldErrorType::Duplicate, where, path,
             "hostPaths[" + std::to_string(it->second) +
                 "] mounts there already; give each host path its own mountPath");
    } else if (path == kInfiniband) {
      refuse(FieldErrorType::Invalid, where, path,
             "no member mounts /dev/infiniband: an RDMA or EFA group gets the device from its "
             "device-plugin resource; remove this host path");
    } else if (g.local_disk && path == g.local_disk->path) {
      refuse(FieldErrorType::Invalid, where, path,
             "is the group's own disk-tier path, which the operator mounts already (volume "
             "local-disk); remove this host path");
    }
  }

  // -- the local disk tier (§3.7) and its freeze (§2.2) ----------------------------------------

  void tierRules(std::size_t i, const api::MemberGroup* before) {
    const api::MemberGroup& g = backend_.spec.members[i];
    const std::string field = indexed(kMembers, i) + ".localDisks";
    const Json& disks = rawAt(spec_, pointer(kMembersAt, i, "localDisks"));
    if (groupChanged(i, "localDisks") && disks.is_array() && disks.size() > 1) {
      refuse(FieldErrorType::Invalid, field, std::nullopt,
             "must list at most one disk tier, not " + std::to_string(disks.size()) +
                 "; a group has one tier directory");
    }
    if (before != nullptr) {
      tierFreeze(i, before);
    }
    if (!g.local_disk) {
      return;
    }
    const api::LocalDisk& disk = *g.local_disk;
    const std::string at = field + "[0]";
    const std::string raw = pointer(kMembersAt, i, "localDisks/0");
    if (groupChanged(i, "localDisks/0/path")) {
      tierPathRules(at + ".path", disk.path);
    }
    if (groupChanged(i, "localDisks/0/capacity") && disk.capacity_bytes &&
        *disk.capacity_bytes < kTierMinimumBytes) {
      refuse(FieldErrorType::Invalid, at + ".capacity",
             quantityText(rawAt(spec_, raw + "/capacity")),
             "must be at least 16Mi, one bucket of the tier");
    }
    if (groupChanged(i, "localDisks/0/keyLimit") && disk.key_limit &&
        *disk.key_limit < kTierMinimumKeys) {
      refuse(FieldErrorType::Invalid, at + ".keyLimit", std::to_string(*disk.key_limit),
             "must be at least 64, the keys of one bucket of the tier");
    }
    if (groupChanged(i, "localDisks/0/eviction") || groupChanged(i, "localDisks/0/capacity")) {
      evictionRules(at, raw, disk);
    }
  }

  void tierFreeze(std::size_t i, const api::MemberGroup* before) {
    const api::MemberGroup& g = backend_.spec.members[i];
    const std::string field = indexed(kMembers, i) + ".localDisks";
    if (!before->local_disk && g.local_disk) {
      refuse(FieldErrorType::Forbidden, field, std::nullopt,
             "a running member group cannot gain a local disk tier: its members would have to "
             "restart to mount the directory. Declare the tier when you create a backend (a "
             "second backend selecting the nodes that carry the disk)");
    } else if (before->local_disk && !g.local_disk) {
      refuse(FieldErrorType::Forbidden, field, std::nullopt,
             "a running member group cannot drop its local disk tier (" + before->local_disk->path +
                 "): its members would have to restart to unmount it; remove the group if it is "
                 "the last, or delete the backend");
    } else if (before->local_disk && g.local_disk &&
               before->local_disk->path != g.local_disk->path) {
      refuse(FieldErrorType::Forbidden, field + "[0].path", std::nullopt,
             "the tier directory of a running group cannot move (" + before->local_disk->path +
                 " -> " + g.local_disk->path +
                 "): its members would have to restart on the new one; capacity, keyLimit and "
                 "eviction stay editable, another path needs another backend");
    }
  }

  void tierPathRules(const std::string& field, const std::string& path) {
    auto invalid = [&](std::string detail) {
      refuse(FieldErrorType::Invalid, field, path, std::move(detail));
    };
    if (path.empty()) {
      refuse(FieldErrorType::Required, field, std::nullopt,
             "name the host directory of the tier, e.g. /var/lib/kvcache");
      return;
    }
    if (path.size() > kMaxTierPathLength) {
      refuse(FieldErrorType::Invalid, field, std::nullopt,
             "must be at most 4096 characters, not " + std::to_string(path.size()));
      return;
    }
    if (std::isspace(static_cast<unsigned char>(path.front())) != 0 ||
        std::isspace(static_cast<unsigned char>(path.back())) != 0) {
      return invalid("must not begin or end with whitespace; write the directory exactly");
    }
    if (path.front() != '/') {
      return invalid("must be an absolute path, e.g. /var/lib/kvcache");
    }
    if (path.find_first_not_of('/') == std::string::npos) {
      return invalid("must not be / (the host's root): name a directory for the tier");
    }
    std::size_t start = 0;
    while (start <= path.size()) {
      const std::size_t slash = path.find('/', start);
      if (path.compare(start, slash == std::string::npos ? std::string::npos : slash - start,
                       "..") == 0) {
        return invalid("must not contain a '..' component; write the directory it means");
      }
      if (slash == std::string::npos) {
        break;
      }
      start = slash + 1;
    }
    const std::string prefix = path.back() == '/' ? path : path + "/";
    if (path == kInfiniband || path.rfind(std::string(kInfiniband) + "/", 0) == 0 ||
        (std::string(kInfiniband) + "/").rfind(prefix, 0) == 0) {
      return invalid(
          "must not equal, lie inside or contain /dev/infiniband (the RDMA "
          "devices); choose a directory elsewhere, e.g. /var/lib/kvcache");
    }
  }

  void evictionRules(const std::string& at, const std::string& raw, const api::LocalDisk& disk) {
    const Json& eviction = rawAt(spec_, raw + "/eviction");
    const Json& watermark = rawAt(eviction, "/watermark");
    const bool has_policy = !rawAt(eviction, "/policy").is_null();
    if (!disk.eviction_enabled && (has_policy || !watermark.is_null())) {
      refuse(FieldErrorType::Invalid, at + ".eviction.enabled", "false",
             "with eviction off, eviction.policy and eviction.watermark do nothing; remove "
             "them, or set enabled to true");
    }
    if (watermark.is_null()) {
      return;
    }
    const std::string where = at + ".eviction.watermark";
    bool both = true;
    for (auto [key, value] :
         {std::pair{"high", disk.watermark_high}, std::pair{"low", disk.watermark_low}}) {
      if (!value) {
        both = false;
        refuse(FieldErrorType::Required, where + "." + key, std::nullopt,
               "a watermark needs both high and low, in percent of the tier's capacity");
      } else if (*value < 1 || *value > 100) {
        both = false;
        refuse(FieldErrorType::Invalid, where + "." + key, std::to_string(*value),
               "must be a percentage between 1 and 100");
      }
    }
    if (both && *disk.watermark_low >= *disk.watermark_high) {
      refuse(FieldErrorType::Invalid, where + ".low", std::to_string(*disk.watermark_low),
             "must be below watermark.high (" + std::to_string(*disk.watermark_high) +
                 "): eviction starts at high and stops at low");
    }
    if (!disk.capacity_bytes && reported_.count(at + ".capacity") == 0) {
      refuse(FieldErrorType::Required, at + ".capacity", std::nullopt,
             "eviction.watermark is in percent of the tier's capacity; set capacity, e.g. "
             "100Gi, or remove the watermark");
    }
  }

  void scaleIn() {
    const auto& grace = backend_.spec.scale_in_grace_period_seconds;
    if (changed("/connection/managed/scaleIn/gracePeriodSeconds") && grace &&
        (*grace < 0 || *grace > kMaxGracePeriodSeconds)) {
      refuse(FieldErrorType::Invalid, "spec.connection.managed.scaleIn.gracePeriodSeconds",
             std::to_string(*grace),
             "must be between 0 and 3600 seconds (a member refuses a longer unmount grace)");
    }
  }

  // -- external --------------------------------------------------------------------------------

  void endpoints() {
    const auto& endpoints = backend_.spec.external_endpoints;
    if (changed(kEndpointsAt)) {
      std::multiset<std::string> names;
      for (const api::Endpoint& endpoint : endpoints) {
        names.insert(endpoint.name);
      }
      if (names != std::multiset<std::string>{std::string(api::kEndpointAdmin),
                                              std::string(api::kEndpointClient)}) {
        std::vector<std::string> quoted;
        for (const api::Endpoint& endpoint : endpoints) {
          quoted.push_back(inQuotes(endpoint.name));
        }
        refuse(FieldErrorType::Invalid, std::string(kEndpoints), std::nullopt,
               "must name exactly the two endpoints Client (the master's RPC address) and Admin "
               "(its admin port), once each, not " +
                   (quoted.empty() ? std::string("none") : api::nameList(quoted)));
      }
    }
    for (std::size_t i = 0; i < endpoints.size(); ++i) {
      const std::string before =
          create() ? "" : api::endpointAddress(old_->spec.external_endpoints, endpoints[i].name);
      if (!before.empty() && before == endpoints[i].address) {
        continue;
      }
      if (auto why = addressProblem(endpoints[i].address)) {
        refuse(FieldErrorType::Invalid, indexed(kEndpoints, i) + ".address", endpoints[i].address,
               *why + "; write host:port, e.g. mooncake-master.store:50051");
      }
    }
  }

  // host:port with no surrounding whitespace, a port in 1..65535, and a host that a URL parser
  // reads back unchanged (no '/', '?', '#', '@'; an IPv6 address in brackets).
  static std::optional<std::string> addressProblem(const std::string& address) {
    if (address.empty()) {
      return "is empty";
    }
    if (address.size() > kMaxAddressLength) {
      return "must be at most 259 characters";
    }
    if (hasSpace(address)) {
      return "must not contain whitespace";
    }
    const std::size_t colon = address.rfind(':');
    if (colon == std::string::npos) {
      return "has no port";
    }
    const std::string host = address.substr(0, colon);
    const std::string port = address.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoi(port) < 1 || std::stoi(port) > 65535) {
      return "must end in a port between 1 and 65535";
    }
    if (host.empty()) {
      return "has no host";
    }
    if (host.front() == '[') {
      const bool bracketed =
          host.size() > 2 && host.back() == ']' &&
          std::all_of(host.begin() + 1, host.end() - 1, [](char c) {
            return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
          });
      return bracketed ? std::nullopt
                       : std::optional<std::string>("has a malformed bracketed IPv6 host");
    }
    if (host.find_first_of("/?#@[]:") != std::string::npos) {
      return "has a host a URL would not read back as written (it contains one of / ? # @ [ ] "
             "or an unbracketed ':')";
    }
    return std::nullopt;
  }

  const api::KVCacheBackend& backend_;
  const Json& spec_;
  const api::KVCacheBackend* old_;  // null on CREATE (or an unreadable stored object)
  const Json* old_spec_;
  std::string settings_image_;
  std::set<std::string> reported_;  // quantity fields already refused by sanitize()
  AdmissionVerdict verdict_;
};

// The quantities of member groups (capacityPerMember, localBufferSize, localDisks[].capacity)
// as written: one that is not a quantity at all, or does not parse, is refused when the update
// moved it, and erased from `object` either way so that the decoder can read the rest.
std::set<std::string> sanitize(Json& object, const Json* old_spec,
                               std::vector<FieldError>& errors) {
  std::set<std::string> reported;
  if (!rawAt(object, "/spec" + std::string(kMembersAt)).is_array()) {
    return reported;
  }
  // Every step exists: rawAt found the list.
  const Json& spec = object["spec"];
  Json& list = object["spec"]["connection"]["managed"]["members"];
  auto check = [&](Json& holder, const std::string& key, const std::string& field,
                   const std::string& at) {
    if (!holder.is_object() || !holder.contains(key) || holder[key].is_null()) {
      return;
    }
    const std::optional<std::string> text = quantityText(holder[key]);
    Status parsed = text ? parseQuantityBytes(*text).status()
                         : invalidArgument(
                               "must be a quantity: a string such as \"8Gi\" or a "
                               "whole number of bytes");
    if (parsed.ok()) {
      return;
    }
    const bool moved = old_spec == nullptr || !sameValue(rawAt(spec, at), rawAt(*old_spec, at));
    if (moved) {
      errors.push_back(
          {FieldErrorType::Invalid, field, text.value_or(holder[key].dump()), parsed.message()});
      reported.insert(field);
    }
    holder.erase(key);
  };
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string field = indexed(kMembers, i);
    for (const char* key : {"capacityPerMember", "localBufferSize"}) {
      check(list[i], key, field + "." + key, pointer(kMembersAt, i, key));
    }
    if (!list[i].is_object() || !list[i].contains("localDisks") ||
        !list[i]["localDisks"].is_array()) {
      continue;
    }
    Json& disks = list[i]["localDisks"];
    for (std::size_t j = 0; j < disks.size(); ++j) {
      check(disks[j], "capacity", indexed(field + ".localDisks", j) + ".capacity",
            pointer(kMembersAt, i, "localDisks/" + std::to_string(j) + "/capacity"));
    }
  }
  return reported;
}

}  // namespace

AdmissionVerdict admitBackend(const BackendAdmission& request) {
  const Json& spec = rawAt(request.object, "/spec");
  std::optional<api::KVCacheBackend> old;
  const Json* old_spec = nullptr;
  if (request.operation == AdmissionOperation::Update && request.old) {
    const Json& stored = rawAt(*request.old, "/spec");
    if (sameValue(spec, stored)) {
      return {};  // nothing under spec moved: a finalizer removal, a label, an annotation
    }
    Json readable = *request.old;
    std::vector<FieldError> ignored;
    sanitize(readable, nullptr, ignored);
    if (auto decoded = api::backendFromJson(readable); decoded.ok()) {
      old = std::move(decoded).value();
      old_spec = &stored;
    }
  }
  AdmissionVerdict verdict;
  Json object = request.object;
  std::set<std::string> reported = sanitize(object, old_spec, verdict.errors);
  auto backend = api::backendFromJson(object);
  if (!backend.ok()) {
    if (verdict.errors.empty()) {
      verdict.errors.push_back(decodeError(backend.status()));
    }
    return verdict;
  }
  AdmissionVerdict judged = Judge(*backend, spec, old ? &*old : nullptr, old_spec,
                                  request.settings_image, std::move(reported))
                                .run();
  verdict.errors.insert(verdict.errors.end(), judged.errors.begin(), judged.errors.end());
  verdict.warnings = std::move(judged.warnings);
  return verdict;
}

}  // namespace kvc::policy
