#pragma once
// Lease-based leader election with client-go's semantics (tools/leaderelection):
//
//   - Timing is validated at construction: LeaseDuration > RenewDeadline > 1.2 * RetryPeriod,
//     all positive (the factor is client-go's JitterFactor).
//   - Expiry is judged by *local observation time*, never by the timestamps in the Lease: a
//     candidate records when it last saw the Lease record change, and may take the Lease only
//     when LeaseDuration has passed on its own clock since then. Clock skew between replicas
//     does not matter; only skew *rate* does.
//   - A candidate tries every RetryPeriod, jittered by up to 1.2x (client-go's JitterUntil);
//     when it knows the Lease will expire sooner than that, it tries at the expiry instead.
//   - Addition to client-go: between tries a candidate also *watches* the Lease (when the lock
//     supports it), so it observes each renewal when it happens rather than at its next
//     jittered poll. Expiry is still judged from the local time of observation, but that time
//     is now within milliseconds of the renewal, so a standby takes over about LeaseDuration
//     after the leader's last renewal (client-go: up to LeaseDuration + 2.2 x RetryPeriod
//     later), and at once when the Lease is released. Polling remains the fallback.
//   - The leader renews every RetryPeriod; a renewal round retries every RetryPeriod and gives
//     up when RenewDeadline has passed since the last successful write was *sent* (client-go:
//     since the round began, a retry period and a call later): leadership is lost, the callback
//     runs, and the process must stop acting as leader (the manager exits).
//   - Fencing (addition to client-go): leadingUntil() is that same moment, the last successful
//     write's send time + RenewDeadline. A standby takes the Lease no sooner than LeaseDuration
//     after it *observed* that write, which is after it was sent; so a leader that has stopped
//     acting by leadingUntil() plus the time it needs to stop never overlaps its successor, as
//     long as RenewDeadline + that time < LeaseDuration (validateFencing). The store launcher
//     stops its master by then; the operator sends no store write after it.
//   - On shutdown a leader releases the Lease (holder cleared, leaseDurationSeconds 1), so a
//     standby takes over after one retry instead of a whole lease duration.
//   - Updates are optimistic: the Lease is written with the resourceVersion that was read, so
//     two candidates can never both succeed in the same round.
//
// The Lease sits behind the LeaseLock interface; tests use an in-memory lock and a FakeClock.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>

#include "kvc/common/clock.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/kube/client.h"
#include "kvc/runtime/backoff.h"

namespace kvc::runtime {

// What a Lease's spec holds (rl.LeaderElectionRecord).
struct LeaderElectionRecord {
  std::string holder_identity;  // "" = nobody
  std::int64_t lease_duration_seconds = 0;
  std::optional<Clock::WallTime> acquire_time;
  std::optional<Clock::WallTime> renew_time;
  std::int64_t leader_transitions = 0;

  friend bool operator==(const LeaderElectionRecord&, const LeaderElectionRecord&) = default;
};

// The Lease as a compare-and-swap register.
class LeaseLock {
public:
  virtual ~LeaseLock() = default;
  // The current record; nullopt when the Lease does not exist. Remembers the version read.
  virtual Result<std::optional<LeaderElectionRecord>> get(std::chrono::milliseconds timeout) = 0;
  // Creates the Lease; AlreadyExists when someone else did first.
  virtual Status create(const LeaderElectionRecord& record, std::chrono::milliseconds timeout) = 0;
  // Replaces the record, conditional on the version last read (Aborted on a conflict).
  virtual Status update(const LeaderElectionRecord& record, std::chrono::milliseconds timeout) = 0;
  // Calls `on_change` with every version of the record (nullopt when the Lease is deleted)
  // until `stop` is requested. Locks that cannot watch return FailedPrecondition at once.
  virtual Status watch(const std::function<void(std::optional<LeaderElectionRecord>)>& on_change,
                       std::stop_token stop) {
    static_cast<void>(on_change);
    static_cast<void>(stop);
    return failedPrecondition("this lock cannot watch");
  }
  // This candidate's identity.
  virtual const std::string& identity() const = 0;
  // "namespace/name", for logs.
  virtual std::string describe() const = 0;
};

// LeaseLock over a coordination.k8s.io/v1 Lease. Every write (a create or an update: only a
// holder or a candidate taking the Lease writes) carries `holder_annotations`, so what they say
// always belongs to the current writer — `kvcache store leader` publishes its master's address
// this way for Lease-addressed members, whose RBAC reads Leases only.
class KubeLeaseLock final : public LeaseLock {
public:
  KubeLeaseLock(kube::ClientPtr client, std::string namespace_name, std::string name,
                std::string identity, Json holder_annotations = Json());
  Result<std::optional<LeaderElectionRecord>> get(std::chrono::milliseconds timeout) override;
  Status create(const LeaderElectionRecord& record, std::chrono::milliseconds timeout) override;
  Status update(const LeaderElectionRecord& record, std::chrono::milliseconds timeout) override;
  Status watch(const std::function<void(std::optional<LeaderElectionRecord>)>& on_change,
               std::stop_token stop) override;
  const std::string& identity() const override { return identity_; }
  std::string describe() const override { return namespace_name_ + "/" + name_; }

private:
  Json metadata(const std::string& version) const;

  kube::ClientPtr client_;
  std::string namespace_name_;
  std::string name_;
  std::string identity_;
  Json holder_annotations_;
  std::mutex mutex_;
  std::string resource_version_;  // of the Lease last read or written
};

// The Lease spec as JSON, and back.
Json leaseSpecFromRecord(const LeaderElectionRecord& record);
Result<LeaderElectionRecord> recordFromLease(const Json& lease);

struct LeaderCallbacks {
  // Runs (on the elector's thread) when this candidate becomes leader; must not block.
  std::function<void()> on_started_leading;
  // Runs when leadership ends (lost, or released at shutdown) — only after on_started_leading.
  std::function<void()> on_stopped_leading;
  // Runs when the observed leader changes (including the first one seen).
  std::function<void(const std::string& identity)> on_new_leader;
};

struct LeaderElectionConfig {
  std::shared_ptr<LeaseLock> lock;
  Clock::Duration lease_duration = std::chrono::seconds(15);
  Clock::Duration renew_deadline = std::chrono::seconds(10);
  Clock::Duration retry_period = std::chrono::seconds(2);
  LeaderCallbacks callbacks;
  bool release_on_cancel = true;
  bool watch_lease = true;  // observe the Lease by watch between tries (see above)
  std::string name;         // for logs and metrics ("kvcache-operator")
  RandomSource random = defaultRandom();
};

inline constexpr double kJitterFactor = 1.2;

// The timing rules alone (LeaseDuration > RenewDeadline > 1.2 x RetryPeriod, all positive, the
// lease at least a second), so a command can refuse bad flags before it reaches any cluster.
Status validateLeaderElectionTiming(Clock::Duration lease_duration, Clock::Duration renew_deadline,
                                    Clock::Duration retry_period);

// What fencing needs on top (see the top of this file): a leader that stops acting at its renew
// deadline and takes up to `stop_time` to stop is gone before any standby can take the Lease,
// with kFenceMargin to spare for the watchdog's tick and the kernel closing its sockets. The
// Lease counts whole seconds, so the lease duration counts as its whole seconds.
inline constexpr std::chrono::milliseconds kFenceMargin{250};
Status validateFencing(Clock::Duration lease_duration, Clock::Duration renew_deadline,
                       Clock::Duration stop_time);

// The timing rules plus a lock with an identity; InvalidArgument naming the rule that fails.
Status validateLeaderElectionConfig(const LeaderElectionConfig& config);

class LeaderElector {
public:
  static Result<std::unique_ptr<LeaderElector>> create(LeaderElectionConfig config,
                                                       const Clock& clock = realClock());

  // Campaigns until leader, then renews until leadership is lost or `stop` is requested
  // (then releases the Lease if configured). Returns when leadership has ended or the
  // campaign was stopped.
  void run(std::stop_token stop);

  bool isLeader() const;
  // The last observed holder ("" = none seen).
  std::string leader() const;
  // The record as last observed (by a read, a write or the watch).
  LeaderElectionRecord observedRecord() const;
  // Until when this replica may act as leader: the last successful acquire or renew's send time
  // + RenewDeadline (the fence; see the top of this file). Clock::TimePoint::min() when it does
  // not lead. A controller or a launcher that acts on behalf of the leader checks it before every
  // outside write and stops acting once it has passed, whatever the renew loop is doing.
  Clock::TimePoint leadingUntil() const;
  // Healthy unless this replica believes it leads but has not renewed for LeaseDuration +
  // `tolerance` (a wedged renew loop; client-go's HealthzAdaptor).
  Status check(Clock::Duration tolerance) const;

  // One attempt (tests drive these directly).
  bool tryAcquireOrRenew();
  bool release();

  const LeaderElectionConfig& config() const { return config_; }

private:
  LeaderElector(LeaderElectionConfig config, const Clock& clock)
      : config_(std::move(config)), clock_(clock) {}
  bool acquire(std::stop_token stop);
  void renew(std::stop_token stop);
  void maybeReportTransition();
  std::chrono::milliseconds callTimeout() const;
  // Records a record seen by the watch (same rule as a read: the time is when it changed).
  void observe(const LeaderElectionRecord& record);
  // When the next try should happen: the jittered `next_try`, or earlier when the watch saw
  // the Lease released since the try began (`watched_before_try`: watch_generation_ then) or
  // what was observed says it is about to expire (under mutex_).
  Clock::TimePoint nextTryLocked(Clock::TimePoint last_try, std::uint64_t watched_before_try,
                                 Clock::TimePoint next_try) const;

  LeaderElectionConfig config_;
  const Clock& clock_;

  mutable std::mutex mutex_;
  LeaderElectionRecord observed_record_;
  Clock::TimePoint observed_time_{};
  bool have_observed_ = false;
  std::string reported_leader_;
  // What the watch last delivered, and how many changes it has delivered: a try's own read
  // may be older than a watch event that arrived meanwhile, so the two are kept apart.
  std::optional<LeaderElectionRecord> watched_record_;
  std::uint64_t watch_generation_ = 0;
  std::condition_variable_any observe_cv_;
  // Deadline for the API calls of the attempt in progress (renew rounds shorten it).
  Clock::TimePoint attempt_deadline_ = Clock::TimePoint::max();
  // The fence: see leadingUntil().
  Clock::TimePoint leading_until_ = Clock::TimePoint::min();
};

}  // namespace kvc::runtime
