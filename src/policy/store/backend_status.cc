#include "kvc/policy/store/backend_status.h"

#include <algorithm>

#include "backend_observation.h"

#include "kvc/api/backend_conditions.h"
#include "kvc/api/message.h"
#include "kvc/api/phase.h"
#include "kvc/common/quantity.h"
#include "kvc/policy/base/text.h"

namespace kvc::policy {
namespace {

namespace bc = api::backend;
using api::Condition;
using api::makeCondition;

// The external backend's LeaderAvailable: its master, read through the spec's Admin endpoint.
Condition leaderAvailable(const BackendReading& reading) {
  if (reading.admin_address.empty()) {
    return makeCondition(bc::kLeaderAvailable, api::kConditionFalse, bc::kReasonNoAdminEndpoint,
                         "the backend names no Admin endpoint, so its master cannot be read. "
                         "Fix: list {name: Admin, address: host:port} in "
                         "spec.connection.external.endpoints");
  }
  if (reading.health == BackendReading::Health::Unreadable) {
    return makeCondition(bc::kLeaderAvailable, api::kConditionFalse, bc::kReasonLeaderUnreachable,
                         "GET " + std::string(reading.admin_tls ? "https://" : "http://") +
                             reading.admin_address +
                             "/health failed: " + api::boundDetail(reading.health_error) +
                             ". Check that the external endpoint address is reachable from the "
                             "operator");
  }
  return observation::leaderFromHealth(reading);
}

Condition membersMounted(const BackendReading& reading, std::size_t listed) {
  if (auto problem = observation::listingProblem(reading)) {
    return *problem;
  }
  if (listed == 0) {
    return makeCondition(bc::kMembersMounted, api::kConditionFalse, bc::kReasonNoSegments,
                         "the master lists no mounted segment: no member has registered. Check "
                         "the members' node capacity and logs");
  }
  return observation::mounted(listed);
}

}  // namespace

namespace observation {

bool serving(const BackendReading& reading) {
  return !reading.admin_address.empty() && reading.health == BackendReading::Health::Serving;
}

Condition leaderFromHealth(const BackendReading& reading) {
  if (reading.health == BackendReading::Health::NotServing) {
    return makeCondition(bc::kLeaderAvailable, api::kConditionFalse,
                         bc::kReasonServicePlaneNotActive,
                         "the master at " + reading.admin_address +
                             " answers but does not serve (service_ready: false; role " +
                             (reading.role.empty() ? "unreported" : reading.role) + ", ha_state " +
                             (reading.ha_state.empty() ? "unreported" : reading.ha_state) + ")");
  }
  return makeCondition(bc::kLeaderAvailable, api::kConditionTrue, bc::kReasonServing,
                       "the master at " + reading.admin_address + " serves (service_ready)");
}

Condition capacityObserved(const BackendReading& reading) {
  if (!serving(reading)) {
    return makeCondition(bc::kCapacityObserved, api::kConditionFalse, bc::kReasonScrapeFailed,
                         "capacity is read from a serving master only; see LeaderAvailable");
  }
  if (!reading.metrics_read) {
    return makeCondition(bc::kCapacityObserved, api::kConditionFalse, bc::kReasonScrapeFailed,
                         "GET http://" + reading.admin_address +
                             "/metrics failed: " + api::boundDetail(reading.metrics_error));
  }
  if (!reading.total_capacity_bytes) {
    return makeCondition(bc::kCapacityObserved, api::kConditionFalse, bc::kReasonFamilyMissing,
                         "the master's metrics carry no master_total_capacity_bytes (a master "
                         "with no mounted segment may leave it out)");
  }
  return makeCondition(
      bc::kCapacityObserved, api::kConditionTrue, bc::kReasonObserved,
      "the master reports " + bytesText(*reading.total_capacity_bytes) + " of memory" +
          (reading.total_file_capacity_bytes.value_or(0) > 0
               ? " and " + bytesText(*reading.total_file_capacity_bytes) + " of disk tier"
               : std::string()));
}

std::optional<Condition> listingProblem(const BackendReading& reading) {
  switch (reading.listing) {
    case BackendReading::Listing::NotRead:
    case BackendReading::Listing::Failed:
      return makeCondition(bc::kMembersMounted, api::kConditionFalse, bc::kReasonListingFailed,
                           "GET http://" + reading.admin_address + "/get_segments_detail failed: " +
                               api::boundDetail(reading.listing_error) +
                               "; the previous list is kept");
    case BackendReading::Listing::TooLarge:
      return makeCondition(bc::kMembersMounted, api::kConditionFalse, bc::kReasonListingTooLarge,
                           "the segment listing is past what a status carries (" +
                               api::boundDetail(reading.listing_error) +
                               "); the previous list is kept");
    case BackendReading::Listing::NotServed:
      if (reading.total_capacity_bytes && *reading.total_capacity_bytes == 0) {
        return makeCondition(bc::kMembersMounted, api::kConditionFalse, bc::kReasonNoSegments,
                             "the master reports no mounted capacity (it predates "
                             "/get_segments_detail, so members cannot be listed)");
      }
      return makeCondition(bc::kMembersMounted, api::kConditionUnknown,
                           bc::kReasonSegmentListingNotServed,
                           "the master does not serve /get_segments_detail (older than Mooncake "
                           "0.3.12), so its members cannot be listed");
    case BackendReading::Listing::Read:
      break;
  }
  return std::nullopt;
}

Condition mounted(std::size_t listed) {
  return makeCondition(bc::kMembersMounted, api::kConditionTrue, bc::kReasonMounted,
                       "the master lists " + plural(static_cast<std::int64_t>(listed), "segment"));
}

Condition poolWrites(const BackendReading& reading) {
  auto unknown = [](std::string_view reason, std::string message) {
    return makeCondition(bc::kPoolWrites, api::kConditionUnknown, reason, std::move(message));
  };
  if (!serving(reading) || !reading.metrics_read ||
      reading.listing == BackendReading::Listing::Failed ||
      reading.listing == BackendReading::Listing::TooLarge ||
      reading.listing == BackendReading::Listing::NotRead) {
    return unknown(bc::kReasonReadFailed,
                   "the master's metrics or its segment listing could not be read");
  }
  if (reading.put_end_total && *reading.put_end_total > 0) {
    return makeCondition(
        bc::kPoolWrites, api::kConditionTrue, bc::kReasonWriteObserved,
        "the master completed " + plural(*reading.put_end_total, "write") + " since it started");
  }
  if (reading.listing == BackendReading::Listing::NotServed) {
    return unknown(bc::kReasonSegmentListingNotServed,
                   "no write completed, and the master does not list its segments' allocation");
  }
  bool allocation_missing = false;
  for (const SegmentRow& segment : reading.segments) {
    if (!segment.allocator_used_bytes) {
      allocation_missing = true;
    } else if (*segment.allocator_used_bytes > 0) {
      return makeCondition(
          bc::kPoolWrites, api::kConditionTrue, bc::kReasonAllocationObserved,
          "segment " + segment.segment_name + " holds " + bytesText(*segment.allocator_used_bytes));
    }
  }
  if (allocation_missing) {
    return unknown(bc::kReasonAllocationMissing,
                   "a segment of the listing reports no allocator_used_bytes");
  }
  if (!reading.put_start_total || !reading.put_end_total || !reading.put_revoke_total) {
    return unknown(bc::kReasonCountersMissing,
                   "the master's metrics carry no put counters (master_put_*_requests_total)");
  }
  if (*reading.put_start_total == 0) {
    return unknown(bc::kReasonNoWritesObserved, "no client has started a write yet");
  }
  if (*reading.put_revoke_total > 0) {
    return makeCondition(bc::kPoolWrites, api::kConditionFalse, bc::kReasonWritesRevoked,
                         plural(*reading.put_start_total, "write") + " started and " +
                             std::to_string(*reading.put_revoke_total) +
                             " were revoked while every member reports zero allocation: writes "
                             "do not land. Check the members' transport and the clients' "
                             "version");
  }
  return unknown(bc::kReasonWriteIncomplete,
                 plural(*reading.put_start_total, "write") + " started and none completed yet");
}

Condition deletable(const BackendFacts& facts) {
  if (!facts.consumers.empty()) {
    return makeCondition(
        bc::kDeletable, api::kConditionFalse, bc::kReasonInUse,
        "used by KVCachePool " + api::nameList(facts.consumers) + "; delete those pools first");
  }
  return makeCondition(bc::kDeletable, api::kConditionTrue, bc::kReasonUnused,
                       facts.dropped_stale
                           ? "no pool uses it (stale usedBy entries of deleted pools were dropped)"
                           : "no pool uses it");
}

void observeCapacity(api::KVCacheBackend::Status& status, const BackendReading& reading) {
  // Absent until a serving master was scraped; cleared by a failed read.
  if (serving(reading) && reading.metrics_read && reading.total_capacity_bytes) {
    status.capacity_total =
        *reading.total_capacity_bytes + reading.total_file_capacity_bytes.value_or(0);
    status.capacity_used =
        reading.allocated_bytes
            ? std::optional<std::int64_t>(*reading.allocated_bytes +
                                          reading.allocated_file_bytes.value_or(0))
            : std::nullopt;
  } else {
    status.capacity_total.reset();
    status.capacity_used.reset();
  }
}

void observeMembers(api::KVCacheBackend::Status& status, const BackendReading& reading,
                    const MemberJoin& join) {
  // Replaced by a listing that was read; kept otherwise.
  if (serving(reading) && reading.listing == BackendReading::Listing::Read) {
    std::vector<api::BackendMember> members;
    for (const SegmentRow& segment : reading.segments) {
      api::BackendMember member;
      member.segment_id = segment.segment_id;
      member.client_id = segment.client_id;
      member.segment_name = segment.segment_name;
      member.protocol = segment.protocol;
      member.state = memberState(segment.status);
      if (join) {
        join(segment, member);
      }
      members.push_back(std::move(member));
    }
    std::sort(members.begin(), members.end(),
              [](const api::BackendMember& a, const api::BackendMember& b) {
                return a.segment_id < b.segment_id;
              });
    status.members = std::move(members);
  } else if (serving(reading) && reading.listing == BackendReading::Listing::NotServed) {
    status.members.clear();
  }
}

void writeUsedBy(api::KVCacheBackend::Status& status, const BackendFacts& facts) {
  status.used_by.clear();
  for (const std::string& pool : facts.consumers) {
    status.used_by.push_back({"KVCachePool", "", pool});
  }
}

std::string deletingMessage(const BackendFacts& facts) {
  return facts.consumers.empty()
             ? "releasing the backend"
             : "waiting for KVCachePool " + api::nameList(facts.consumers) + " to stop using it";
}

void setPhase(api::KVCacheBackend::Status& status, const BackendFacts& facts,
              const std::optional<std::string>& image_error) {
  static const Condition kAbsent;
  const Condition* found = api::findCondition(status.conditions, bc::kLeaderAvailable);
  const Condition& leader = found != nullptr ? *found : kAbsent;
  found = api::findCondition(status.conditions, bc::kMembersMounted);
  const Condition& members = found != nullptr ? *found : kAbsent;
  status.phase_message.clear();
  if (facts.backend.metadata.deleting) {
    status.phase = std::string(api::kPhaseDeleting);
    status.phase_message = deletingMessage(facts);
  } else if (image_error && status.endpoints.empty()) {
    status.phase = std::string(api::kPhaseDegraded);
    status.phase_message = "nothing rendered: " + *image_error;
  } else if (leader.status == api::kConditionFalse) {
    const bool starting = leader.reason == bc::kReasonLeaderStarting ||
                          leader.reason == bc::kReasonServicePlaneNotActive;
    status.phase = std::string(starting ? api::kPhaseProvisioning : api::kPhaseError);
    status.phase_message = leader.message;
  } else if (image_error) {
    status.phase = std::string(api::kPhaseDegraded);
    status.phase_message = "the backend runs, but changes would not reach it: " + *image_error;
  } else if (members.status == api::kConditionFalse) {
    status.phase = std::string(api::kPhaseDegraded);
    status.phase_message = members.reason + ": " + members.message;
  } else if (leader.status == api::kConditionTrue) {
    status.phase = std::string(api::kPhaseReady);
  } else {
    status.phase = std::string(api::kPhaseProvisioning);
    status.phase_message = "waiting for the backend's workloads";
  }
}

}  // namespace observation

std::string memberState(std::string_view segment_status) {
  static constexpr std::pair<std::string_view, std::string_view> kStates[] = {
      {"OK", "OK"},
      {"DRAINING", "Draining"},
      {"DRAINED", "Drained"},
      {"GRACEFULLY_UNMOUNTING", "GracefullyUnmounting"},
      {"UNMOUNTING", "Unmounting"},
      {"UNDEFINED", "Undefined"},
  };
  for (const auto& [wire, state] : kStates) {
    if (wire == segment_status) {
      return std::string(state);
    }
  }
  return std::string(segment_status);
}

api::KVCacheBackend::Status externalBackendStatus(const BackendFacts& facts,
                                                  const BackendReading& reading,
                                                  std::int64_t generation, std::string_view now) {
  api::KVCacheBackend::Status status = facts.backend.status;
  status.endpoints = facts.backend.spec.external_endpoints;
  observation::writeUsedBy(status, facts);
  observation::observeCapacity(status, reading);
  observation::observeMembers(status, reading, nullptr);
  const Condition leader = leaderAvailable(reading);
  std::vector<Condition> desired = {leader, observation::capacityObserved(reading),
                                    observation::poolWrites(reading),
                                    observation::deletable(facts)};
  std::vector<std::string_view> owned = {bc::kLeaderAvailable, bc::kCapacityObserved,
                                         bc::kPoolWrites, bc::kDeletable};
  if (observation::serving(reading)) {
    // Judged only from a listing of a serving master; otherwise the last verdict stands, with
    // the list it was made on.
    desired.push_back(membersMounted(reading, status.members.size()));
    owned.push_back(bc::kMembersMounted);
  }
  api::setConditions(status.conditions, desired, owned, generation, now);
  observation::setPhase(status, facts, std::nullopt);
  return status;
}

}  // namespace kvc::policy
