#pragma once
// Fencing of the operator's writes to a store (the tenant ledger, the admin API): a transport
// that sends a write only while this replica still leads, and never lets it run past that.
//
// The fence is the leader elector's (runtime::LeaderElector::leadingUntil): the last successful
// Lease write's send time + the renew deadline, which is before any standby can take the Lease.
// A write (any method but GET and HEAD) is
//   - refused without being sent, as StoreErrorKind::Fenced, once the fence has passed;
//   - otherwise sent with its deadline cut to the fence, so that the client gives it up no later.
// What the master does with bytes it already received is its own: a write that reached it before
// the fence may still be applied a moment after (a local HTTP handler: milliseconds), never one
// sent after. Reads are not fenced: they change nothing, and a standby's caches need none.

#include <functional>
#include <memory>

#include "kvc/common/clock.h"
#include "kvc/store/http.h"

namespace kvc::store {

// Until when writes may be sent; Clock::TimePoint::max() for always.
using WriteFence = std::function<Clock::TimePoint()>;

// `inner` behind `fence`. The clock must outlive the transport.
std::shared_ptr<HttpTransport> newFencedTransport(std::shared_ptr<HttpTransport> inner,
                                                  WriteFence fence,
                                                  const Clock& clock = realClock());

}  // namespace kvc::store
