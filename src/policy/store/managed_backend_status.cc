#include "kvc/policy/store/managed_backend_status.h"

#include <algorithm>
#include <map>
#include <set>

#include "backend_observation.h"
#include "kvc/api/backend_conditions.h"
#include "kvc/api/message.h"
#include "kvc/api/phase.h"
#include "kvc/policy/base/text.h"
#include "kvc/policy/store/pod_faults.h"
#include "kvc/policy/store/store_workload.h"
#include "kvc/policy/store/tier_survey.h"

namespace kvc::policy {
namespace {

namespace bc = api::backend;
using api::Condition;
using api::makeCondition;

std::int64_t integerAt(const Json& object, const char* pointer) {
  if (!object.is_object()) {
    return 0;
  }
  const Json value = object.value(Json::json_pointer(pointer), Json());
  return value.is_number_integer() ? value.get<std::int64_t>() : 0;
}

std::string stringAt(const Json& object, const char* pointer) {
  if (!object.is_object()) {
    return {};
  }
  const Json value = object.value(Json::json_pointer(pointer), Json());
  return value.is_string() ? value.get<std::string>() : std::string();
}

bool deleting(const Json& pod) {
  return !pod.value(Json::json_pointer("/metadata/deletionTimestamp"), Json()).is_null();
}

// The host part of a transfer-engine endpoint: "10.0.0.5:12345" -> "10.0.0.5",
// "[fd00::5]:12345" -> "fd00::5".
std::string hostOf(std::string_view endpoint) {
  if (!endpoint.empty() && endpoint.front() == '[') {
    const auto close = endpoint.find(']');
    return std::string(
        endpoint.substr(1, close == std::string_view::npos ? endpoint.npos : close - 1));
  }
  const auto colon = endpoint.rfind(':');
  if (colon != std::string_view::npos && endpoint.find(':') == colon) {
    return std::string(endpoint.substr(0, colon));
  }
  return std::string(endpoint);
}

std::int64_t desiredLeaderReplicas(const ManagedBackendFacts& facts) {
  const api::KVCacheBackend& backend = facts.backend.backend;
  return electing(backend) && !facts.published_leader_image ? backend.spec.leader.replicas : 1;
}

Condition leaderAvailable(const ManagedBackendFacts& facts, const BackendReading& reading) {
  if (reading.admin_address.empty()) {
    return makeCondition(bc::kLeaderAvailable, api::kConditionFalse, bc::kReasonNoAdminEndpoint,
                         "nothing is rendered, so there is no master to read: " +
                             facts.image_error.value_or("the leader is not rendered yet"));
  }
  if (reading.health != BackendReading::Health::Unreadable) {
    return observation::leaderFromHealth(reading);
  }
  const std::string failed = "GET http://" + reading.admin_address +
                             "/health failed: " + api::boundDetail(reading.health_error);
  const std::int64_t ready = integerAt(facts.leader_deployment, "/status/readyReplicas");
  if (ready > 0) {
    return makeCondition(bc::kLeaderAvailable, api::kConditionFalse, bc::kReasonLeaderUnreachable,
                         "Deployment " + leaderName(facts.backend.backend.metadata.name) + " has " +
                             plural(ready, "ready replica") + ", but " + failed +
                             ". Check the Service and the master's log");
  }
  std::vector<const Json*> pods;
  for (const Json& pod : facts.leader_pods) {
    pods.push_back(&pod);
  }
  std::sort(pods.begin(), pods.end(), [](const Json* a, const Json* b) {
    return stringAt(*a, "/metadata/name") < stringAt(*b, "/metadata/name");
  });
  for (const Json* pod : pods) {
    if (auto fault = podFault(*pod)) {
      std::string reason;
      switch (fault->kind) {
        case PodFault::Kind::Unschedulable:
          reason = std::string(bc::kReasonLeaderUnschedulable);
          break;
        case PodFault::Kind::InitCrashLooping:
        case PodFault::Kind::CrashLooping:
          reason = std::string(bc::kReasonLeaderCrashLooping);
          break;
        case PodFault::Kind::Waiting:
          reason = fault->reason;
          break;
      }
      return makeCondition(bc::kLeaderAvailable, api::kConditionFalse, reason,
                           "the leader does not serve: " + describePodFault(*fault));
    }
  }
  return makeCondition(bc::kLeaderAvailable, api::kConditionFalse, bc::kReasonLeaderStarting,
                       "waiting for the leader to serve (" + failed + ")");
}

std::string memberFaultReason(const PodFault& fault) {
  switch (fault.kind) {
    case PodFault::Kind::Unschedulable:
      return std::string(bc::kReasonUnschedulable);
    case PodFault::Kind::InitCrashLooping:
      return std::string(bc::kReasonMemberInitCrashLooping);
    case PodFault::Kind::CrashLooping:
      return std::string(bc::kReasonMemberCrashLooping);
    case PodFault::Kind::Waiting:
      break;
  }
  return fault.reason;
}

// What the member Pods say, across every group, in group then name order.
struct MemberPods {
  std::vector<PodFault> faults;
  std::vector<std::string> ready_names;
  std::map<std::string, std::vector<std::string>> ready_by_address;  // address -> Pod names
  std::map<std::string, std::vector<std::string>> host_network_by_address;
  std::map<std::string, std::pair<std::string, int>> by_address;  // -> (node, group)
  std::size_t running = 0;
};

MemberPods memberPods(const ManagedBackendFacts& facts) {
  MemberPods out;
  for (std::size_t g = 0; g < facts.groups.size(); ++g) {
    std::vector<const MemberPodObservation*> observed_pods;
    for (const MemberPodObservation& observed : facts.groups[g].pods) {
      if (!deleting(observed.pod)) {
        observed_pods.push_back(&observed);
      }
    }
    std::sort(observed_pods.begin(), observed_pods.end(),
              [](const MemberPodObservation* a, const MemberPodObservation* b) {
                return stringAt(a->pod, "/metadata/name") < stringAt(b->pod, "/metadata/name");
              });
    for (const MemberPodObservation* observed : observed_pods) {
      const Json* pod = &observed->pod;
      const std::string name = stringAt(*pod, "/metadata/name");
      const std::string address = podAddress(*pod);
      if (auto fault = podFault(*pod)) {
        out.faults.push_back(*fault);
      } else if (auto mount = mountFault(*pod, observed->mount_failure)) {
        out.faults.push_back(*mount);
      }
      if (stringAt(*pod, "/status/phase") == "Running") {
        ++out.running;
      }
      if (address.empty()) {
        continue;
      }
      out.by_address[address] = {stringAt(*pod, "/spec/nodeName"), static_cast<int>(g)};
      if (pod->value(Json::json_pointer("/spec/hostNetwork"), false)) {
        out.host_network_by_address[address].push_back(name);
      }
      if (podReady(*pod)) {
        out.ready_names.push_back(name);
        out.ready_by_address[address].push_back(name);
      }
    }
  }
  return out;
}

std::optional<Condition> memberFault(const MemberPods& pods) {
  if (pods.faults.empty()) {
    return std::nullopt;
  }
  const PodFault& first = pods.faults.front();
  std::string message = describePodFault(first);
  if (pods.faults.size() > 1) {
    message += " (and " +
               plural(static_cast<std::int64_t>(pods.faults.size() - 1), "more faulty member Pod") +
               ")";
  }
  return makeCondition(bc::kMembersMounted, api::kConditionFalse, memberFaultReason(first),
                       std::move(message));
}

// MembersMounted; nullopt keeps the last verdict (the master could not be listed and no Pod is
// at fault).
std::optional<Condition> membersMounted(const ManagedBackendFacts& facts,
                                        const BackendReading& reading, const MemberPods& pods) {
  if (!facts.pods_listed) {
    return makeCondition(bc::kMembersMounted, api::kConditionFalse, bc::kReasonPodsUnreadable,
                         "the member Pods cannot be listed: " + api::boundDetail(facts.pods_error));
  }
  const std::optional<Condition> fault = memberFault(pods);
  if (!observation::serving(reading)) {
    return fault;
  }
  if (auto problem = observation::listingProblem(reading)) {
    return fault ? fault : problem;
  }
  if (reading.segments.empty()) {
    if (fault) {
      return fault;
    }
    return makeCondition(bc::kMembersMounted, api::kConditionFalse, bc::kReasonNoSegments,
                         "the master lists no mounted segment; " +
                             plural(static_cast<std::int64_t>(pods.running), "member Pod") +
                             " running. Check the members' node capacity and logs");
  }
  for (const auto& [address, names] : pods.host_network_by_address) {
    if (names.size() > 1) {
      return makeCondition(
          bc::kMembersMounted, api::kConditionFalse, bc::kReasonAmbiguousMemberIdentity,
          "host-network member Pods " + api::nameList(names) + " share the address " + address +
              ", so a segment cannot be told apart by its endpoint. Select "
              "disjoint nodes for the groups");
    }
  }
  std::set<std::string> hosts;
  for (const SegmentRow& segment : reading.segments) {
    hosts.insert(hostOf(segment.te_endpoint));
  }
  std::vector<std::string> short_names;
  for (const auto& [address, names] : pods.ready_by_address) {
    if (hosts.count(address) == 0) {
      short_names.insert(short_names.end(), names.begin(), names.end());
    }
  }
  if (!short_names.empty()) {
    std::sort(short_names.begin(), short_names.end());
    return makeCondition(bc::kMembersMounted, api::kConditionFalse, bc::kReasonSegmentsShort,
                         std::to_string(short_names.size()) + " of " +
                             std::to_string(pods.ready_names.size()) +
                             " ready member Pods match no segment: " + api::nameList(short_names) +
                             ". Their memory is not in CAPACITY; check their logs");
  }
  if (fault) {
    return fault;
  }
  return observation::mounted(reading.segments.size());
}

std::optional<Condition> electionObserved(const ManagedBackendFacts& facts) {
  const api::KVCacheBackend& backend = facts.backend.backend;
  if (backend.spec.leader.election_backend != "Kubernetes") {
    return std::nullopt;
  }
  const std::string lease = facts.namespace_name + "/" + leaderName(backend.metadata.name);
  if (facts.published_leader_image) {
    return makeCondition(
        bc::kElectionObserved, api::kConditionFalse, bc::kReasonNoHolder,
        "no election runs: the image " + *facts.published_leader_image +
            " is not this project's store build (the Setting kv-cache-backend-image names " +
            (facts.settings_image.empty() ? std::string("none") : facts.settings_image) +
            "), so its leader runs mooncake_master alone at one replica and Lease " + lease +
            " is never held. To elect (leader.replicas above 1), remove spec.image so that the "
            "Setting kv-cache-backend-image supplies this project's build, or name a tag of its "
            "repository");
  }
  if (facts.lease.state == LeaseObservation::State::Unreadable) {
    return makeCondition(
        bc::kElectionObserved, api::kConditionUnknown, bc::kReasonLeaseUnreadable,
        "Lease " + lease + " cannot be read: " + api::boundDetail(facts.lease.error));
  }
  if (facts.lease.state == LeaseObservation::State::Read && !facts.lease.holder.empty()) {
    return makeCondition(bc::kElectionObserved, api::kConditionTrue, bc::kReasonElecting,
                         "Lease " + lease + " is held by " + facts.lease.holder + " (" +
                             plural(facts.lease.transitions, "transition") + ")");
  }
  if (integerAt(facts.leader_deployment, "/status/readyReplicas") == 0) {
    return makeCondition(bc::kElectionObserved, api::kConditionUnknown, bc::kReasonLeaderStarting,
                         "no leader replica is ready yet, so no election can be observed");
  }
  return makeCondition(
      bc::kElectionObserved, api::kConditionFalse, bc::kReasonNoHolder,
      "a leader replica is ready but Lease " + lease +
          (facts.lease.state == LeaseObservation::State::Absent ? " does not exist"
                                                                : " names no holder") +
          ": the image may lack the election (kvcache store leader), its Role or RoleBinding "
          "may be missing, or the first campaign is still running");
}

std::optional<Condition> rolloutComplete(const ManagedBackendFacts& facts) {
  const Json& deployment = facts.leader_deployment;
  if (!deployment.is_object()) {
    return std::nullopt;
  }
  const std::int64_t generation = integerAt(deployment, "/metadata/generation");
  if (integerAt(deployment, "/status/observedGeneration") < generation) {
    return makeCondition(bc::kRolloutComplete, api::kConditionUnknown, bc::kReasonUpdateNotObserved,
                         "the Deployment controller has not observed generation " +
                             std::to_string(generation) + " yet");
  }
  const std::int64_t desired = desiredLeaderReplicas(facts);
  const std::int64_t wanted =
      deployment.value(Json::json_pointer("/spec/replicas"), std::int64_t{1});
  const std::int64_t updated = integerAt(deployment, "/status/updatedReplicas");
  const std::int64_t total = integerAt(deployment, "/status/replicas");
  if (wanted != desired) {
    return makeCondition(bc::kRolloutComplete, api::kConditionFalse, bc::kReasonReplicasPending,
                         "the Deployment runs " + std::to_string(wanted) + " of " +
                             std::to_string(desired) +
                             " replicas: standbys are added once the electing template runs "
                             "alone");
  }
  if (updated == desired && total == desired) {
    return makeCondition(bc::kRolloutComplete, api::kConditionTrue, bc::kReasonComplete,
                         plural(desired, "replica") + " on the current template");
  }
  return makeCondition(bc::kRolloutComplete, api::kConditionFalse, bc::kReasonProgressing,
                       std::to_string(updated) + " of " + std::to_string(desired) +
                           " on the current template, " + std::to_string(total) + " in total");
}

// The survey of one member Pod: its local-disk-survey init container's message.
std::optional<TierSurvey> surveyOf(const Json& pod) {
  const Json statuses =
      pod.value(Json::json_pointer("/status/initContainerStatuses"), Json::array());
  for (const Json& status : statuses) {
    if (status.value("name", "") != "local-disk-survey") {
      continue;
    }
    for (const char* state : {"/state/terminated/message", "/lastState/terminated/message"}) {
      const std::string message = stringAt(status, state);
      if (auto survey = parseTierSurvey(message)) {
        if (survey->control > 0 && survey->entries >= 0) {
          return survey;
        }
      }
    }
  }
  return std::nullopt;
}

// TierWasEmpty when it can be decided now; nullopt while undecided.
std::optional<Condition> tierWasEmpty(const ManagedBackendFacts& facts, std::size_t group) {
  if (group >= facts.groups.size() || !facts.groups[group].daemon_set.is_object()) {
    return std::nullopt;
  }
  const std::int64_t wanted =
      integerAt(facts.groups[group].daemon_set, "/status/desiredNumberScheduled");
  std::map<std::string, std::int64_t> entries_by_node;
  for (const MemberPodObservation& observed : facts.groups[group].pods) {
    if (!observed.in_survey_window) {
      continue;
    }
    if (auto survey = surveyOf(observed.pod)) {
      entries_by_node[stringAt(observed.pod, "/spec/nodeName")] = survey->entries;
    }
  }
  if (wanted <= 0 || static_cast<std::int64_t>(entries_by_node.size()) < wanted) {
    return std::nullopt;
  }
  std::vector<std::string> found;
  for (const auto& [node, entries] : entries_by_node) {
    if (entries > 0) {
      found.push_back(node + ": " + std::to_string(entries));
    }
  }
  const std::string& path = facts.backend.backend.spec.members[group].local_disk->path;
  if (found.empty()) {
    return makeCondition(bc::kTierWasEmpty, api::kConditionTrue, bc::kReasonEmpty,
                         "the tier directory " + path + " was empty on " +
                             plural(static_cast<std::int64_t>(entries_by_node.size()), "node"));
  }
  return makeCondition(bc::kTierWasEmpty, api::kConditionFalse, bc::kReasonPreexistingContent,
                       "the tier directory " + path + " already held entries (" +
                           api::nameList(found) +
                           "); nothing was removed. Empty it yourself; cleanAfterDelete empties "
                           "it only when this backend is deleted");
}

std::optional<std::size_t> tierGroup(const api::KVCacheBackend& backend) {
  for (std::size_t g = 0; g < backend.spec.members.size(); ++g) {
    if (backend.spec.members[g].local_disk) {
      return g;
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<api::Endpoint> managedEndpoints(std::string_view backend,
                                            std::string_view namespace_name) {
  const std::string host = leaderName(backend) + "." + std::string(namespace_name) + ".svc";
  return {{std::string(api::kEndpointClient), host + ":" + std::to_string(kMasterRpcPort)},
          {std::string(api::kEndpointAdmin), host + ":" + std::to_string(kMasterAdminPort)}};
}

api::KVCacheBackend::Status managedBackendStatus(const ManagedBackendFacts& facts,
                                                 const BackendReading& reading,
                                                 std::int64_t generation, std::string_view now) {
  const api::KVCacheBackend& backend = facts.backend.backend;
  api::KVCacheBackend::Status status = backend.status;
  const bool rendered = !facts.image_error || facts.leader_deployment.is_object();
  if (rendered) {
    status.endpoints = managedEndpoints(backend.metadata.name, facts.namespace_name);
  }
  observation::writeUsedBy(status, facts.backend);
  observation::observeCapacity(status, reading);
  const MemberPods pods = memberPods(facts);
  observation::observeMembers(
      status, reading, [&](const SegmentRow& segment, api::BackendMember& member) {
        auto it = pods.by_address.find(hostOf(segment.te_endpoint));
        if (it == pods.by_address.end()) {
          return;
        }
        auto shared = pods.host_network_by_address.find(it->first);
        if (shared != pods.host_network_by_address.end() && shared->second.size() > 1) {
          return;  // two host-network Pods share the address: no answer is better than a guess
        }
        member.node_name = it->second.first;
        member.medium = backend.spec.members[static_cast<std::size_t>(it->second.second)].medium;
      });

  const Condition leader = leaderAvailable(facts, reading);
  std::vector<Condition> desired = {leader, observation::capacityObserved(reading),
                                    observation::poolWrites(reading),
                                    observation::deletable(facts.backend)};
  std::vector<std::string_view> owned = {bc::kLeaderAvailable,  bc::kCapacityObserved,
                                         bc::kPoolWrites,       bc::kDeletable,
                                         bc::kElectionObserved, bc::kRolloutComplete};
  if (auto members = membersMounted(facts, reading, pods)) {
    desired.push_back(*members);
    owned.push_back(bc::kMembersMounted);
  }
  if (auto election = electionObserved(facts)) {
    desired.push_back(*election);
  }
  if (auto rollout = rolloutComplete(facts)) {
    desired.push_back(*rollout);
  }
  const std::optional<std::size_t> tier = tierGroup(backend);
  if (!tier) {
    owned.push_back(bc::kTierWasEmpty);
  } else if (api::findCondition(status.conditions, bc::kTierWasEmpty) == nullptr) {
    if (auto decided = tierWasEmpty(facts, *tier)) {
      desired.push_back(*decided);
    }
  }
  api::setConditions(status.conditions, desired, owned, generation, now);
  observation::setPhase(status, facts.backend, facts.image_error);
  return status;
}

api::KVCacheBackend::Status teardownStatus(const BackendFacts& facts, std::string_view where,
                                           std::int64_t generation, std::string_view now) {
  api::KVCacheBackend::Status status = facts.backend.status;
  observation::writeUsedBy(status, facts);
  api::setCondition(status.conditions, observation::deletable(facts), generation, now);
  status.phase = std::string(api::kPhaseDeleting);
  status.phase_message = std::string(where);
  return status;
}

std::optional<std::string> tierNotEmptyEvent(const api::KVCacheBackend::Status& before,
                                             const api::KVCacheBackend::Status& after) {
  const Condition* was = api::findCondition(before.conditions, bc::kTierWasEmpty);
  const Condition* now = api::findCondition(after.conditions, bc::kTierWasEmpty);
  if (was == nullptr && now != nullptr && now->reason == bc::kReasonPreexistingContent) {
    return now->message;
  }
  return std::nullopt;
}

}  // namespace kvc::policy
