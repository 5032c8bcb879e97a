#pragma once
// What the external and the managed backend statuses share (private to policy/): the
// conditions and figures that come from the master's own answers, whoever runs the master.
// backend_status.cc reports an external backend with them, managed_backend_status.cc a managed
// one, adding what its Pods and workloads say.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "kvc/api/backend.h"
#include "kvc/api/condition.h"
#include "kvc/policy/store/backend_status.h"

namespace kvc::policy::observation {

// The master answered /health with service_ready: true.
bool serving(const BackendReading& reading);
// LeaderAvailable from a /health that answered (NotServing or Serving).
api::Condition leaderFromHealth(const BackendReading& reading);
api::Condition capacityObserved(const BackendReading& reading);
// MembersMounted when the listing itself is the problem (failed, too large, not served);
// nullopt for a listing that was read.
std::optional<api::Condition> listingProblem(const BackendReading& reading);
// MembersMounted=True/Mounted, "lists N segments".
api::Condition mounted(std::size_t listed);
api::Condition poolWrites(const BackendReading& reading);
api::Condition deletable(const BackendFacts& facts);

// status.capacity from a serving master's metrics; cleared otherwise.
void observeCapacity(api::KVCacheBackend::Status& status, const BackendReading& reading);
// Fills a member's node and medium from what runs it (managed backends); may be empty.
using MemberJoin = std::function<void(const SegmentRow&, api::BackendMember&)>;
// status.members from a listing that was read (sorted by segment ID); kept otherwise.
void observeMembers(api::KVCacheBackend::Status& status, const BackendReading& reading,
                    const MemberJoin& join);
// status.usedBy: the live consuming pools.
void writeUsedBy(api::KVCacheBackend::Status& status, const BackendFacts& facts);
// phaseMessage while deleting.
std::string deletingMessage(const BackendFacts& facts);
// The phase and its message (contract §2.7) from the conditions already set in `status`:
// Deleting; with `image_error` (managed only) and no endpoint, Degraded ("nothing rendered");
// LeaderAvailable False: Error, or Provisioning while starting or not yet active; with
// `image_error`, Degraded (changes would not reach it); MembersMounted False: Degraded; Ready;
// else Provisioning.
void setPhase(api::KVCacheBackend::Status& status, const BackendFacts& facts,
              const std::optional<std::string>& image_error);

}  // namespace kvc::policy::observation
