// Leader election timing with client-go's semantics, on an in-memory lock and a fake clock.
#include "kvc/runtime/leader_election.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <stop_token>
#include <thread>
#include <utility>

namespace kvc::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The Lease as shared memory: a record plus a version, compare-and-swap on update.
struct SharedLease {
  std::mutex mutex;
  std::condition_variable changed;
  std::optional<LeaderElectionRecord> record;
  std::int64_t version = 0;
  bool fail = false;  // the API server is unreachable
  int writes = 0;
};

// LeaseLock
class MemoryLock final : public LeaseLock {
public:
  MemoryLock(std::shared_ptr<SharedLease> lease, std::string identity)
      : lease_(std::move(lease)), identity_(std::move(identity)) {}

  Result<std::optional<LeaderElectionRecord>> get(milliseconds) override {
    std::optional<LeaderElectionRecord> record;
    {
      std::lock_guard<std::mutex> guard(lease_->mutex);
      if (lease_->fail) {
        return unavailable("connection refused");
      }
      read_version_ = lease_->version;
      record = lease_->record;
    }
    if (auto hook = std::exchange(after_first_read_, nullptr)) {
      hook();  // the Lease changes after the read and before the caller sees it
    }
    return record;
  }
  Status create(const LeaderElectionRecord& record, milliseconds) override {
    std::lock_guard<std::mutex> guard(lease_->mutex);
    if (lease_->fail) {
      return unavailable("connection refused");
    }
    if (lease_->record) {
      return alreadyExists("lease exists");
    }
    lease_->record = record;
    read_version_ = ++lease_->version;
    ++lease_->writes;
    lease_->changed.notify_all();
    return okStatus();
  }
  Status update(const LeaderElectionRecord& record, milliseconds) override {
    std::lock_guard<std::mutex> guard(lease_->mutex);
    if (lease_->fail) {
      return unavailable("connection refused");
    }
    if (read_version_ != lease_->version) {
      return aborted("the object has been modified");
    }
    lease_->record = record;
    read_version_ = ++lease_->version;
    ++lease_->writes;
    lease_->changed.notify_all();
    return okStatus();
  }
  Status watch(const std::function<void(std::optional<LeaderElectionRecord>)>& on_change,
               std::stop_token stop) override {
    if (!watchable_) {
      return LeaseLock::watch(on_change, stop);
    }
    std::unique_lock<std::mutex> lock(lease_->mutex);
    std::int64_t seen = -1;
    while (!stop.stop_requested()) {
      if (lease_->version != seen) {
        seen = lease_->version;
        const auto record = lease_->record;
        lock.unlock();
        on_change(record);
        delivered_version_ = seen;
        lock.lock();
        continue;
      }
      lease_->changed.wait_for(lock, std::chrono::milliseconds(1));
    }
    return okStatus();
  }
  void setWatchable(bool w) { watchable_ = w; }
  // Runs once, right after the next read returns from the shared Lease.
  void setAfterFirstRead(std::function<void()> hook) { after_first_read_ = std::move(hook); }
  // The version of the Lease the watch has delivered (and the elector has observed).
  std::int64_t deliveredVersion() const { return delivered_version_; }
  const std::string& identity() const override { return identity_; }
  std::string describe() const override { return "test/lease"; }

private:
  std::shared_ptr<SharedLease> lease_;
  std::string identity_;
  std::int64_t read_version_ = -1;
  bool watchable_ = false;
  std::function<void()> after_first_read_;
  std::atomic<std::int64_t> delivered_version_{-1};
};

LeaderElectionConfig configFor(std::shared_ptr<SharedLease> lease, const std::string& id) {
  LeaderElectionConfig c;
  c.lock = std::make_shared<MemoryLock>(std::move(lease), id);
  c.lease_duration = seconds(15);
  c.renew_deadline = seconds(10);
  c.retry_period = seconds(2);
  c.name = "test";
  c.random = [] { return 0.0; };
  return c;
}

std::unique_ptr<LeaderElector> elector(std::shared_ptr<SharedLease> lease, const std::string& id,
                                       const Clock& clock) {
  auto e = LeaderElector::create(configFor(std::move(lease), id), clock);
  EXPECT_TRUE(e.ok()) << e.status().toString();
  return std::move(e).value();
}

TEST(LeaderElectionConfigTest, TimingMustNest) {
  auto lease = std::make_shared<SharedLease>();
  auto c = configFor(lease, "a");
  EXPECT_TRUE(validateLeaderElectionConfig(c).ok());
  c.lease_duration = seconds(10);  // == renew deadline
  EXPECT_EQ(validateLeaderElectionConfig(c).code(), StatusCode::InvalidArgument);
  c = configFor(lease, "a");
  c.renew_deadline = milliseconds(2400);  // == 1.2 x retry period
  EXPECT_FALSE(validateLeaderElectionConfig(c).ok());
  c.renew_deadline = milliseconds(2401);
  EXPECT_TRUE(validateLeaderElectionConfig(c).ok());
  c = configFor(lease, "a");
  c.retry_period = Clock::Duration::zero();
  EXPECT_FALSE(validateLeaderElectionConfig(c).ok());
  c = configFor(lease, "");
  EXPECT_FALSE(validateLeaderElectionConfig(c).ok());
  EXPECT_FALSE(LeaderElector::create(c, realClock()).ok());
}

TEST(LeaderElectorTest, TheFirstCandidateCreatesTheLease) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto a = elector(lease, "a", clock);
  EXPECT_TRUE(a->tryAcquireOrRenew());
  EXPECT_TRUE(a->isLeader());
  ASSERT_TRUE(lease->record.has_value());
  EXPECT_EQ(lease->record->holder_identity, "a");
  EXPECT_EQ(lease->record->lease_duration_seconds, 15);
  EXPECT_EQ(lease->record->leader_transitions, 0);
  EXPECT_EQ(lease->record->renew_time, clock.wallNow());
}

TEST(LeaderElectorTest, ACandidateWaitsAWholeLeaseDurationOfItsOwnClock) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto a = elector(lease, "a", clock);
  auto b = elector(lease, "b", clock);
  ASSERT_TRUE(a->tryAcquireOrRenew());
  // b first sees the record now; the Lease's own timestamps do not matter.
  EXPECT_FALSE(b->tryAcquireOrRenew());
  EXPECT_EQ(b->leader(), "a");
  EXPECT_FALSE(b->isLeader());
  clock.advance(seconds(14));
  EXPECT_FALSE(b->tryAcquireOrRenew());  // unchanged record, 14 s < 15 s since observed
  clock.advance(seconds(1));
  EXPECT_TRUE(b->tryAcquireOrRenew());  // 15 s without a change: expired
  EXPECT_EQ(lease->record->holder_identity, "b");
  EXPECT_EQ(lease->record->leader_transitions, 1);
}

TEST(LeaderElectorTest, ARenewalRestartsTheStandbysObservationClock) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto a = elector(lease, "a", clock);
  auto b = elector(lease, "b", clock);
  ASSERT_TRUE(a->tryAcquireOrRenew());
  EXPECT_FALSE(b->tryAcquireOrRenew());
  clock.advance(seconds(10));
  ASSERT_TRUE(a->tryAcquireOrRenew());   // renew: the record changes
  clock.advance(seconds(6));             // 16 s since b first looked, 6 s since the renewal
  EXPECT_FALSE(b->tryAcquireOrRenew());  // b sees a new record: its clock restarts now
  clock.advance(seconds(14));
  EXPECT_FALSE(b->tryAcquireOrRenew());
  clock.advance(seconds(1));
  EXPECT_TRUE(b->tryAcquireOrRenew());
}

TEST(LeaderElectorTest, RenewingKeepsTheAcquireTimeAndTransitions) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto a = elector(lease, "a", clock);
  ASSERT_TRUE(a->tryAcquireOrRenew());
  const auto acquired = lease->record->acquire_time;
  clock.advance(seconds(2));
  ASSERT_TRUE(a->tryAcquireOrRenew());
  EXPECT_EQ(lease->record->acquire_time, acquired);
  EXPECT_EQ(lease->record->renew_time, clock.wallNow());
  EXPECT_EQ(lease->record->leader_transitions, 0);
}

TEST(LeaderElectorTest, ALostCompareAndSwapMeansNoLeadership) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto a = elector(lease, "a", clock);
  auto b = elector(lease, "b", clock);
  auto c = elector(lease, "c", clock);
  ASSERT_TRUE(a->tryAcquireOrRenew());
  EXPECT_FALSE(b->tryAcquireOrRenew());
  EXPECT_FALSE(c->tryAcquireOrRenew());
  clock.advance(seconds(16));
  // Both standbys read the same expired record; only the first update can win.
  EXPECT_TRUE(b->tryAcquireOrRenew());
  EXPECT_FALSE(c->tryAcquireOrRenew());  // c re-reads: b's fresh record is not expired
  EXPECT_EQ(lease->record->holder_identity, "b");
}

TEST(LeaderElectorTest, ReleaseLetsAStandbyTakeOverAfterOneSecond) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto a = elector(lease, "a", clock);
  auto b = elector(lease, "b", clock);
  ASSERT_TRUE(a->tryAcquireOrRenew());
  EXPECT_FALSE(b->tryAcquireOrRenew());
  ASSERT_TRUE(a->release());
  EXPECT_EQ(lease->record->holder_identity, "");
  EXPECT_EQ(lease->record->lease_duration_seconds, 1);
  EXPECT_FALSE(a->isLeader());
  // An empty holder may be taken at once.
  EXPECT_TRUE(b->tryAcquireOrRenew());
  EXPECT_EQ(lease->record->leader_transitions, 1);
}

TEST(LeaderElectorTest, HealthFailsWhenTheLeaderStopsRenewing) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto a = elector(lease, "a", clock);
  EXPECT_TRUE(a->check(seconds(20)).ok());  // not leading: healthy
  ASSERT_TRUE(a->tryAcquireOrRenew());
  clock.advance(seconds(35));
  EXPECT_TRUE(a->check(seconds(20)).ok());
  clock.advance(seconds(1));
  EXPECT_EQ(a->check(seconds(20)).code(), StatusCode::Unavailable);
}

// Advances the fake clock in steps, letting the elector thread reach its next wait each time.
// Time moves only while the elector sleeps on the fake clock: each step waits for a sleeper.
void awaitSleeper(
    FakeClock& clock, const std::function<bool()>& done = [] { return false; }) {
  while (clock.waiters() == 0 && !done()) {
    std::this_thread::yield();
  }
}

void advanceInSteps(FakeClock& clock, Clock::Duration total, Clock::Duration step) {
  for (Clock::Duration done{}; done < total; done += step) {
    awaitSleeper(clock);
    clock.advance(step);
  }
}

// Advances in `step`s, each once the elector sleeps, until `done()`.
void advanceUntil(FakeClock& clock, const std::function<bool()>& done, Clock::Duration step) {
  while (!done()) {
    awaitSleeper(clock, done);
    if (!done()) {
      clock.advance(step);
    }
  }
}

TEST(LeaderElectorTest, RunLeadsUntilStoppedThenReleases) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto config = configFor(lease, "a");
  std::atomic<int> started{0};
  std::atomic<int> stopped{0};
  config.callbacks.on_started_leading = [&] { ++started; };
  config.callbacks.on_stopped_leading = [&] { ++stopped; };
  auto a = LeaderElector::create(std::move(config), clock);
  ASSERT_TRUE(a.ok());
  std::stop_source stop;
  std::thread runner([&] { (*a)->run(stop.get_token()); });
  advanceInSteps(clock, seconds(10), milliseconds(500));
  EXPECT_EQ(started, 1);
  EXPECT_TRUE((*a)->isLeader());
  {
    std::lock_guard<std::mutex> guard(lease->mutex);
    EXPECT_GE(lease->writes, 5);  // renewed every retry period
  }
  stop.request_stop();
  runner.join();
  EXPECT_EQ(stopped, 1);
  EXPECT_EQ(lease->record->holder_identity, "");  // released
}

TEST(LeaderElectorTest, RunGivesUpLeadershipWhenRenewalsFailPastTheDeadline) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto config = configFor(lease, "a");
  std::atomic<int> stopped{0};
  config.callbacks.on_stopped_leading = [&] { ++stopped; };
  auto a = LeaderElector::create(std::move(config), clock);
  ASSERT_TRUE(a.ok());
  std::thread runner([&] { (*a)->run(std::stop_token()); });
  advanceInSteps(clock, seconds(4), milliseconds(500));
  ASSERT_TRUE((*a)->isLeader());
  {
    std::lock_guard<std::mutex> guard(lease->mutex);
    lease->fail = true;
  }
  const Clock::TimePoint failed_at = clock.now();
  const Clock::TimePoint fence = (*a)->leadingUntil();
  // The last renewal was sent at most a retry period ago; the fence is 10 s after it.
  EXPECT_GT(fence, failed_at + seconds(8) - milliseconds(1));
  EXPECT_LE(fence, failed_at + seconds(10));
  // The renew loop retries every 2 s and gives up at the fence, not a round later.
  advanceUntil(
      clock, [&] { return stopped != 0; }, milliseconds(500));
  runner.join();
  EXPECT_GE(clock.now(), fence);
  EXPECT_LE(clock.now(), fence + milliseconds(500));
  EXPECT_FALSE((*a)->isLeader());
  EXPECT_EQ((*a)->leadingUntil(), Clock::TimePoint::min());
}

TEST(LeaderElectorTest, LeadingUntilIsTheLastSuccessfulWritesSendTimePlusTheRenewDeadline) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto a = elector(lease, "a", clock);
  auto b = elector(lease, "b", clock);
  EXPECT_EQ(a->leadingUntil(), Clock::TimePoint::min());
  const Clock::TimePoint acquired = clock.now();
  ASSERT_TRUE(a->tryAcquireOrRenew());
  EXPECT_EQ(a->leadingUntil(), acquired + seconds(10));
  EXPECT_FALSE(b->tryAcquireOrRenew());
  EXPECT_EQ(b->leadingUntil(), Clock::TimePoint::min());  // a standby never leads
  clock.advance(seconds(3));
  ASSERT_TRUE(a->tryAcquireOrRenew());
  EXPECT_EQ(a->leadingUntil(), acquired + seconds(13));
  {
    std::lock_guard<std::mutex> guard(lease->mutex);
    lease->fail = true;
  }
  clock.advance(seconds(1));
  EXPECT_FALSE(a->tryAcquireOrRenew());
  EXPECT_EQ(a->leadingUntil(), acquired + seconds(13));  // a failed renewal moves nothing
  {
    std::lock_guard<std::mutex> guard(lease->mutex);
    lease->fail = false;
  }
  EXPECT_TRUE(a->release());
  EXPECT_EQ(a->leadingUntil(), Clock::TimePoint::min());
}

// The fence leaves a standby nothing to overlap: at the earliest moment it may take the Lease
// (a lease duration after it observed the last renewal, which is after it was sent), the leader
// has been past its fence for lease - renew deadline.
TEST(LeaderElectorTest, NoStandbyTakesTheLeaseBeforeTheLeadersFence) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto a = elector(lease, "a", clock);
  auto b = elector(lease, "b", clock);
  ASSERT_TRUE(a->tryAcquireOrRenew());
  EXPECT_FALSE(b->tryAcquireOrRenew());  // b observes the renewal at once
  const Clock::TimePoint fence = a->leadingUntil();
  while (!b->tryAcquireOrRenew()) {
    clock.advance(milliseconds(100));
  }
  EXPECT_GE(clock.now(), fence + seconds(15) - seconds(10));
}

TEST(LeaderElectionConfigTest, FencingNeedsTheRenewDeadlineAndTheStopWithinTheLease) {
  EXPECT_TRUE(validateFencing(seconds(4), seconds(3), milliseconds(500)).ok());
  EXPECT_TRUE(validateFencing(seconds(4), seconds(3), milliseconds(750)).ok());
  const Status over = validateFencing(seconds(4), seconds(3), milliseconds(751));
  EXPECT_EQ(over.code(), StatusCode::InvalidArgument);
  EXPECT_NE(over.message().find("renew deadline (3000 ms) + the stop time (751 ms) + 250 ms"),
            std::string::npos)
      << over.message();
  // client-go's defaults with a 10 s stop grace: a cut-off leader's master outlives its Lease.
  EXPECT_FALSE(validateFencing(seconds(15), seconds(10), seconds(10)).ok());
  // The Lease counts whole seconds: 4.9 s is a 4 s lease to a standby.
  EXPECT_FALSE(validateFencing(milliseconds(4900), milliseconds(4000), milliseconds(500)).ok());
}

// Candidate "b" campaigning on its own thread until stop() or destruction.
class RunningStandby {
public:
  // `after_first_read` runs inside b's first read of the Lease (given its lock).
  RunningStandby(const std::shared_ptr<SharedLease>& lease, const Clock& clock, bool watch,
                 double jitter, std::function<void(const MemoryLock&)> after_first_read = {}) {
    auto config = configFor(lease, "b");
    auto lock = std::make_shared<MemoryLock>(lease, "b");
    lock->setWatchable(watch);
    if (after_first_read) {
      lock->setAfterFirstRead(
          [lock = lock.get(), hook = std::move(after_first_read)] { hook(*lock); });
    }
    config.lock = lock;
    config.random = [jitter] { return jitter; };
    config.callbacks.on_started_leading = [this] { elected_ = true; };
    auto created = LeaderElector::create(std::move(config), clock);
    EXPECT_TRUE(created.ok()) << created.status().toString();
    elector_ = std::move(created).value();
    runner_ = std::thread([this] { elector_->run(stop_.get_token()); });
  }
  ~RunningStandby() { stop(); }
  RunningStandby(const RunningStandby&) = delete;
  RunningStandby& operator=(const RunningStandby&) = delete;

  void stop() {
    if (runner_.joinable()) {
      stop_.request_stop();
      runner_.join();
    }
  }
  bool elected() const { return elected_; }
  const LeaderElector& elector() const { return *elector_; }

private:
  std::atomic<bool> elected_{false};
  std::unique_ptr<LeaderElector> elector_;
  std::stop_source stop_;
  std::thread runner_;
};

TEST(LeaderElectorTest, AStandbyTakesOverWithinLeaseDurationPlusRetryPeriod) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto leader = elector(lease, "a", clock);
  ASSERT_TRUE(leader->tryAcquireOrRenew());
  // The longest jitter: retries at 2 x 2.2 s spacing.
  RunningStandby b(lease, clock, /*watch=*/false, /*jitter=*/0.99);
  // "a" dies right after its last renewal; b must win no later than lease + retry period after.
  const Clock::TimePoint died = clock.now();
  advanceUntil(
      clock, [&] { return b.elected(); }, milliseconds(100));
  const auto takeover = clock.now() - died;
  EXPECT_GE(takeover, seconds(15));
  EXPECT_LE(takeover, seconds(15) + seconds(2));
}

TEST(LeaderElectorTest, AWatchingStandbyTakesOverOneLeaseDurationAfterTheLastRenewal) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto leader = elector(lease, "a", clock);
  ASSERT_TRUE(leader->tryAcquireOrRenew());
  // The longest jitter: the watch must not depend on it.
  RunningStandby b(lease, clock, /*watch=*/true, /*jitter=*/0.99);
  // The leader renews at 0.5 s, 1.0 s, ... 3.0 s, then dies; b sees each renewal as it happens.
  for (int i = 0; i < 6; ++i) {
    awaitSleeper(clock);
    clock.advance(milliseconds(500));
    ASSERT_TRUE(leader->tryAcquireOrRenew());
    LeaderElectionRecord renewed;
    {
      std::lock_guard<std::mutex> guard(lease->mutex);
      renewed = *lease->record;
    }
    while (!(b.elector().observedRecord() == renewed)) {
      std::this_thread::yield();
    }
  }
  const Clock::TimePoint last_renewal = clock.now();
  advanceUntil(
      clock, [&] { return b.elected(); }, milliseconds(100));
  const auto takeover = clock.now() - last_renewal;
  EXPECT_GE(takeover, seconds(15));
  EXPECT_LE(takeover, seconds(15) + milliseconds(100));
}

TEST(LeaderElectorTest, AWatchingStandbyTakesAReleasedLeaseAtOnce) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto leader = elector(lease, "a", clock);
  ASSERT_TRUE(leader->tryAcquireOrRenew());
  RunningStandby b(lease, clock, /*watch=*/true, /*jitter=*/0.0);
  awaitSleeper(clock);
  ASSERT_TRUE(leader->release());
  // No clock movement at all: the watch sees the release and b tries at once.
  while (!b.elected()) {
    std::this_thread::yield();
  }
  b.stop();
  EXPECT_EQ(lease->record->holder_identity, "");  // b took it, then released it on stop
  EXPECT_EQ(lease->record->leader_transitions, 1);
}

// The release lands while b's try is reading the Lease (the read still shows "a"), and b's
// watch reports it before that try is over: the watch's news must not be overwritten by the
// try's older read, and b takes the Lease without waiting for its jittered retry.
TEST(LeaderElectorTest, AReleaseTheWatchSeesDuringATryIsTakenAtOnce) {
  FakeClock clock;
  auto lease = std::make_shared<SharedLease>();
  auto leader = elector(lease, "a", clock);
  ASSERT_TRUE(leader->tryAcquireOrRenew());
  RunningStandby b(lease, clock, /*watch=*/true, /*jitter=*/0.0, [&](const MemoryLock& lock) {
    EXPECT_TRUE(leader->release());
    std::int64_t released = 0;
    {
      std::lock_guard<std::mutex> guard(lease->mutex);
      released = lease->version;
    }
    while (lock.deliveredVersion() < released) {
      std::this_thread::yield();
    }
  });
  // No clock movement at all: only the watch's news can make b try again.
  const auto deadline = std::chrono::steady_clock::now() + seconds(5);
  while (!b.elected() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_TRUE(b.elected());
}

}  // namespace
}  // namespace kvc::runtime
