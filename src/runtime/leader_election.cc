#include "kvc/runtime/leader_election.h"

#include "kvc/kube/object.h"
#include "kvc/kube/time.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <thread>

namespace kvc::runtime {
namespace {

std::int64_t wholeSeconds(Clock::Duration d) {
  return std::chrono::duration_cast<std::chrono::seconds>(d).count();
}

std::string str(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::int64_t integer(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

Result<std::optional<Clock::WallTime>> timeField(const Json& spec, const char* key) {
  const std::string text = str(spec, key);
  if (text.empty()) {
    return std::optional<Clock::WallTime>();
  }
  KVC_ASSIGN_OR_RETURN(auto t, kube::parseTime(text));
  return std::optional<Clock::WallTime>(std::chrono::time_point_cast<Clock::WallTime::duration>(t));
}

}  // namespace

Json leaseSpecFromRecord(const LeaderElectionRecord& record) {
  Json spec = Json::object();
  spec["holderIdentity"] = record.holder_identity;
  spec["leaseDurationSeconds"] = record.lease_duration_seconds;
  if (record.acquire_time) {
    spec["acquireTime"] = kube::formatMicroTime(*record.acquire_time);
  }
  if (record.renew_time) {
    spec["renewTime"] = kube::formatMicroTime(*record.renew_time);
  }
  spec["leaseTransitions"] = record.leader_transitions;
  return spec;
}

Result<LeaderElectionRecord> recordFromLease(const Json& lease) {
  LeaderElectionRecord record;
  auto spec_it = lease.find("spec");
  if (spec_it == lease.end() || !spec_it->is_object()) {
    return record;  // a Lease with an empty spec: nobody holds it
  }
  const Json& spec = *spec_it;
  record.holder_identity = str(spec, "holderIdentity");
  record.lease_duration_seconds = integer(spec, "leaseDurationSeconds");
  record.leader_transitions = integer(spec, "leaseTransitions");
  KVC_ASSIGN_OR_RETURN(record.acquire_time, timeField(spec, "acquireTime"));
  KVC_ASSIGN_OR_RETURN(record.renew_time, timeField(spec, "renewTime"));
  return record;
}

KubeLeaseLock::KubeLeaseLock(kube::ClientPtr client, std::string namespace_name, std::string name,
                             std::string identity, Json holder_annotations)
    : client_(std::move(client)),
      namespace_name_(std::move(namespace_name)),
      name_(std::move(name)),
      identity_(std::move(identity)),
      holder_annotations_(std::move(holder_annotations)) {}

Json KubeLeaseLock::metadata(const std::string& version) const {
  Json meta = {{"name", name_}, {"namespace", namespace_name_}};
  if (!version.empty()) {
    meta["resourceVersion"] = version;
  }
  if (holder_annotations_.is_object() && !holder_annotations_.empty()) {
    meta["annotations"] = holder_annotations_;
  }
  return meta;
}

Result<std::optional<LeaderElectionRecord>> KubeLeaseLock::get(std::chrono::milliseconds timeout) {
  kube::Api api =
      kube::Api(client_, kube::resources::leases(), namespace_name_).withTimeout(timeout);
  auto lease = api.get(name_);
  if (!lease.ok()) {
    if (lease.error().isNotFound()) {
      return std::optional<LeaderElectionRecord>();
    }
    return lease.status();
  }
  KVC_ASSIGN_OR_RETURN(LeaderElectionRecord record, recordFromLease(*lease));
  std::lock_guard<std::mutex> guard(mutex_);
  resource_version_ = kube::object::resourceVersion(*lease);
  return std::optional<LeaderElectionRecord>(std::move(record));
}

Status KubeLeaseLock::create(const LeaderElectionRecord& record,
                             std::chrono::milliseconds timeout) {
  kube::Api api =
      kube::Api(client_, kube::resources::leases(), namespace_name_).withTimeout(timeout);
  Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", metadata("")},
                {"spec", leaseSpecFromRecord(record)}};
  auto created = api.create(lease);
  if (!created.ok()) {
    return created.status();
  }
  std::lock_guard<std::mutex> guard(mutex_);
  resource_version_ = kube::object::resourceVersion(*created);
  return okStatus();
}

Status KubeLeaseLock::update(const LeaderElectionRecord& record,
                             std::chrono::milliseconds timeout) {
  std::string version;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    version = resource_version_;
  }
  if (version.empty()) {
    return failedPrecondition("lease " + describe() + " must be read before it is updated");
  }
  kube::Api api =
      kube::Api(client_, kube::resources::leases(), namespace_name_).withTimeout(timeout);
  Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", metadata(version)},
                {"spec", leaseSpecFromRecord(record)}};
  auto updated = api.replace(name_, lease);
  if (!updated.ok()) {
    return updated.status();
  }
  std::lock_guard<std::mutex> guard(mutex_);
  resource_version_ = kube::object::resourceVersion(*updated);
  return okStatus();
}

Status KubeLeaseLock::watch(
    const std::function<void(std::optional<LeaderElectionRecord>)>& on_change,
    std::stop_token stop) {
  kube::Api api(client_, kube::resources::leases(), namespace_name_);
  kube::WatchParams params;
  params.field_selector = "metadata.name=" + name_;
  params.timeout_seconds = 300;
  params.allow_bookmarks = false;
  const Clock& clock = realClock();
  while (!stop.stop_requested()) {
    // No resourceVersion: the server first sends the Lease as it is, then every change.
    auto end = api.watch(
        params,
        [&](kube::WatchEvent&& event) {
          switch (event.type) {
            case kube::WatchEventType::Added:
            case kube::WatchEventType::Modified: {
              auto record = recordFromLease(event.object);
              if (record.ok()) {
                on_change(std::move(record).value());
              }
              break;
            }
            case kube::WatchEventType::Deleted:
              on_change(std::nullopt);
              break;
            case kube::WatchEventType::Bookmark:
              break;
            case kube::WatchEventType::Error:
              return false;
          }
          return !stop.stop_requested();
        },
        stop);
    if (!end.ok() && !stop.stop_requested()) {
      spdlog::debug("lease {}: watch ended ({}); polling continues, watching again in 1 s",
                    describe(), end.error().describe());
      clock.sleepFor(stop, std::chrono::seconds(1));
    }
  }
  return okStatus();
}

Status validateLeaderElectionTiming(Clock::Duration lease_duration, Clock::Duration renew_deadline,
                                    Clock::Duration retry_period) {
  using std::chrono::duration;
  if (lease_duration <= Clock::Duration::zero() || renew_deadline <= Clock::Duration::zero() ||
      retry_period <= Clock::Duration::zero()) {
    return invalidArgument("lease duration, renew deadline and retry period must be positive");
  }
  if (lease_duration <= renew_deadline) {
    return invalidArgument("the lease duration must be greater than the renew deadline");
  }
  const double jittered_retry = kJitterFactor * duration<double>(retry_period).count();
  if (duration<double>(renew_deadline).count() <= jittered_retry) {
    return invalidArgument("the renew deadline must be greater than 1.2 x the retry period");
  }
  if (lease_duration < std::chrono::seconds(1)) {
    return invalidArgument(
        "the lease duration must be at least one second (the Lease counts "
        "whole seconds)");
  }
  return okStatus();
}

Status validateFencing(Clock::Duration lease_duration, Clock::Duration renew_deadline,
                       Clock::Duration stop_time) {
  using std::chrono::milliseconds;
  const auto ms = [](Clock::Duration d) {
    return std::to_string(std::chrono::duration_cast<milliseconds>(d).count()) + " ms";
  };
  const Clock::Duration lease = std::chrono::seconds(wholeSeconds(lease_duration));
  if (renew_deadline + stop_time + kFenceMargin > lease) {
    return invalidArgument("the renew deadline (" + ms(renew_deadline) + ") + the stop time (" +
                           ms(stop_time) + ") + " + ms(kFenceMargin) +
                           " must not exceed the lease duration (" + ms(lease) +
                           "): a leader cut off from the API server would still be stopping "
                           "when a standby takes the Lease");
  }
  return okStatus();
}

Status validateLeaderElectionConfig(const LeaderElectionConfig& config) {
  if (!config.lock) {
    return invalidArgument("leader election needs a lock");
  }
  if (config.lock->identity().empty()) {
    return invalidArgument("leader election needs a non-empty identity");
  }
  return validateLeaderElectionTiming(config.lease_duration, config.renew_deadline,
                                      config.retry_period);
}

Result<std::unique_ptr<LeaderElector>> LeaderElector::create(LeaderElectionConfig config,
                                                             const Clock& clock) {
  KVC_RETURN_IF_ERROR(validateLeaderElectionConfig(config));
  return std::unique_ptr<LeaderElector>(new LeaderElector(std::move(config), clock));
}

Clock::TimePoint LeaderElector::leadingUntil() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return leading_until_;
}

bool LeaderElector::isLeader() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return have_observed_ && observed_record_.holder_identity == config_.lock->identity();
}

LeaderElectionRecord LeaderElector::observedRecord() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return observed_record_;
}

std::string LeaderElector::leader() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return observed_record_.holder_identity;
}

Status LeaderElector::check(Clock::Duration tolerance) const {
  std::lock_guard<std::mutex> guard(mutex_);
  if (!have_observed_ || observed_record_.holder_identity != config_.lock->identity()) {
    return okStatus();
  }
  if (clock_.now() - observed_time_ > config_.lease_duration + tolerance) {
    return unavailable("failed to renew leadership of lease " + config_.lock->describe() +
                       " for longer than the lease duration");
  }
  return okStatus();
}

std::chrono::milliseconds LeaderElector::callTimeout() const {
  using std::chrono::milliseconds;
  Clock::TimePoint deadline;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    deadline = attempt_deadline_;
  }
  if (deadline == Clock::TimePoint::max()) {
    return std::chrono::duration_cast<milliseconds>(config_.renew_deadline);
  }
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - clock_.now());
  return std::max(left, milliseconds(100));
}

bool LeaderElector::tryAcquireOrRenew() {
  const std::string& id = config_.lock->identity();
  const Clock::WallTime wall = clock_.wallNow();
  // Every write below is sent after this: the fence counts from here.
  const Clock::TimePoint sent = clock_.now();
  LeaderElectionRecord desired;
  desired.holder_identity = id;
  desired.lease_duration_seconds = wholeSeconds(config_.lease_duration);
  desired.acquire_time = wall;
  desired.renew_time = wall;

  // Fast path: a leader whose lease is still valid renews without reading first.
  {
    std::unique_lock<std::mutex> lock(mutex_);
    const bool leader = have_observed_ && observed_record_.holder_identity == id;
    const bool valid =
        observed_time_ + std::chrono::seconds(observed_record_.lease_duration_seconds) >
        clock_.now();
    if (leader && valid) {
      LeaderElectionRecord renewal = desired;
      renewal.acquire_time = observed_record_.acquire_time;
      renewal.leader_transitions = observed_record_.leader_transitions;
      lock.unlock();
      const Status updated = config_.lock->update(renewal, callTimeout());
      if (updated.ok()) {
        std::lock_guard<std::mutex> guard(mutex_);
        observed_record_ = renewal;
        observed_time_ = clock_.now();
        leading_until_ = sent + config_.renew_deadline;
        return true;
      }
      spdlog::debug("leader election {}: optimistic renew failed ({}), reading the lease",
                    config_.name, updated.toString());
    }
  }

  // 1. Read (or create) the record.
  auto current = config_.lock->get(callTimeout());
  if (!current.ok()) {
    spdlog::warn("leader election {}: cannot read lease {}: {}", config_.name,
                 config_.lock->describe(), current.status().toString());
    return false;
  }
  if (!current->has_value()) {
    const Status created = config_.lock->create(desired, callTimeout());
    if (!created.ok()) {
      spdlog::warn("leader election {}: cannot create lease {}: {}", config_.name,
                   config_.lock->describe(), created.toString());
      return false;
    }
    std::lock_guard<std::mutex> guard(mutex_);
    observed_record_ = desired;
    observed_time_ = clock_.now();
    have_observed_ = true;
    leading_until_ = sent + config_.renew_deadline;
    return true;
  }
  const LeaderElectionRecord& old = **current;

  // 2. Note when the record last changed, by our own clock; respect an unexpired holder.
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!have_observed_ || !(observed_record_ == old)) {
      observed_record_ = old;
      observed_time_ = clock_.now();
      have_observed_ = true;
    }
    const bool valid =
        observed_time_ + std::chrono::seconds(old.lease_duration_seconds) > clock_.now();
    if (!old.holder_identity.empty() && valid && old.holder_identity != id) {
      return false;  // held by someone else and not yet expired
    }
    // 3. Keep the acquire time while we lead; count a transition when we take over.
    if (old.holder_identity == id) {
      desired.acquire_time = old.acquire_time;
      desired.leader_transitions = old.leader_transitions;
    } else {
      desired.leader_transitions = old.leader_transitions + 1;
    }
  }
  const Status updated = config_.lock->update(desired, callTimeout());
  if (!updated.ok()) {
    spdlog::info("leader election {}: cannot update lease {}: {}", config_.name,
                 config_.lock->describe(), updated.toString());
    return false;
  }
  std::lock_guard<std::mutex> guard(mutex_);
  observed_record_ = desired;
  observed_time_ = clock_.now();
  leading_until_ = sent + config_.renew_deadline;
  return true;
}

bool LeaderElector::release() {
  LeaderElectionRecord released;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!have_observed_ || observed_record_.holder_identity != config_.lock->identity()) {
      return true;
    }
    const Clock::WallTime wall = clock_.wallNow();
    released.leader_transitions = observed_record_.leader_transitions;
    released.lease_duration_seconds = 1;
    released.acquire_time = wall;
    released.renew_time = wall;
    attempt_deadline_ = clock_.now() + config_.renew_deadline;
    leading_until_ = Clock::TimePoint::min();  // no longer acting, whether the write lands or not
  }
  const Status updated = config_.lock->update(released, callTimeout());
  if (!updated.ok()) {
    spdlog::warn("leader election {}: cannot release lease {}: {}", config_.name,
                 config_.lock->describe(), updated.toString());
    return false;
  }
  std::lock_guard<std::mutex> guard(mutex_);
  observed_record_ = released;
  observed_time_ = clock_.now();
  spdlog::info("leader election {}: released lease {}", config_.name, config_.lock->describe());
  return true;
}

void LeaderElector::maybeReportTransition() {
  std::string holder;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (observed_record_.holder_identity == reported_leader_) {
      return;
    }
    reported_leader_ = observed_record_.holder_identity;
    holder = reported_leader_;
  }
  if (!holder.empty()) {
    spdlog::info("leader election {}: new leader is {}", config_.name, holder);
  }
  if (config_.callbacks.on_new_leader) {
    config_.callbacks.on_new_leader(holder);
  }
}

void LeaderElector::observe(const LeaderElectionRecord& record) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (watched_record_ && *watched_record_ == record) {
    return;  // a watch started again re-sends the Lease as it is
  }
  watched_record_ = record;
  ++watch_generation_;
  if (!have_observed_ || !(observed_record_ == record)) {
    observed_record_ = record;
    observed_time_ = clock_.now();
    have_observed_ = true;
  }
  observe_cv_.notify_all();
}

Clock::TimePoint LeaderElector::nextTryLocked(Clock::TimePoint last_try,
                                              std::uint64_t watched_before_try,
                                              Clock::TimePoint next_try) const {
  // The watch saw the Lease released after the last try began: try now. Its event may have
  // landed while that try was reading a holder that was still there, so what the try itself
  // read says nothing about it.
  if (watch_generation_ != watched_before_try && watched_record_ &&
      watched_record_->holder_identity.empty()) {
    return last_try;
  }
  if (!have_observed_ || observed_record_.holder_identity.empty()) {
    // Never read, or the last try read it free and still failed (an API error): wait for the
    // jittered retry, never spin.
    return next_try;
  }
  // Try right at the expiry when it comes before the next jittered try (and after the last).
  const Clock::TimePoint expiry = observed_time_ +
                                  std::chrono::seconds(observed_record_.lease_duration_seconds) +
                                  std::chrono::milliseconds(1);
  return expiry > last_try ? std::min(next_try, expiry) : next_try;
}

bool LeaderElector::acquire(std::stop_token stop) {
  spdlog::info("leader election {}: {} is attempting to acquire lease {}", config_.name,
               config_.lock->identity(), config_.lock->describe());
  // Between tries, observe the Lease as it changes (ends when acquire returns).
  std::jthread watcher;
  if (config_.watch_lease) {
    watcher = std::jthread([this](std::stop_token own) {
      const Status watched = config_.lock->watch(
          [this](std::optional<LeaderElectionRecord> record) {
            observe(record.value_or(LeaderElectionRecord{}));
          },
          own);
      if (!watched.ok()) {
        spdlog::debug("leader election {}: not watching the lease: {}", config_.name,
                      watched.toString());
      }
    });
  }
  while (!stop.stop_requested()) {
    std::uint64_t watched_before_try = 0;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      attempt_deadline_ = clock_.now() + config_.renew_deadline;
      watched_before_try = watch_generation_;
    }
    const Clock::TimePoint last_try = clock_.now();
    const bool acquired = tryAcquireOrRenew();
    maybeReportTransition();
    if (acquired) {
      spdlog::info("leader election {}: {} acquired lease {}", config_.name,
                   config_.lock->identity(), config_.lock->describe());
      return true;
    }
    const Clock::TimePoint next_try =
        clock_.now() + jitter(config_.retry_period, kJitterFactor, config_.random);
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop.stop_requested()) {
      const Clock::TimePoint wake = nextTryLocked(last_try, watched_before_try, next_try);
      if (clock_.now() >= wake) {
        break;
      }
      const std::uint64_t generation = watch_generation_;
      clock_.waitUntil(observe_cv_, lock, stop, wake,
                       [&] { return watch_generation_ != generation; });
    }
  }
  return false;
}

void LeaderElector::renew(std::stop_token stop) {
  while (!stop.stop_requested()) {
    // A round lasts until the fence: the last successful write's send time + RenewDeadline.
    const Clock::TimePoint deadline = leadingUntil();
    bool renewed = false;
    while (!stop.stop_requested() && clock_.now() < deadline) {
      {
        std::lock_guard<std::mutex> guard(mutex_);
        attempt_deadline_ = deadline;
      }
      if (tryAcquireOrRenew()) {
        renewed = true;
        break;
      }
      const Clock::TimePoint next = std::min(clock_.now() + config_.retry_period, deadline);
      if (!clock_.sleepUntil(stop, next)) {
        break;
      }
    }
    maybeReportTransition();
    if (stop.stop_requested()) {
      break;
    }
    if (!renewed) {
      spdlog::error(
          "leader election {}: failed to renew lease {} within {} ms; leadership lost",
          config_.name, config_.lock->describe(),
          std::chrono::duration_cast<std::chrono::milliseconds>(config_.renew_deadline).count());
      {
        std::lock_guard<std::mutex> guard(mutex_);
        // We no longer claim the lease, whatever the last record said.
        if (observed_record_.holder_identity == config_.lock->identity()) {
          observed_record_.holder_identity.clear();
        }
        leading_until_ = Clock::TimePoint::min();
      }
      return;
    }
    clock_.sleepFor(stop, config_.retry_period);
  }
  if (config_.release_on_cancel) {
    release();
  }
}

void LeaderElector::run(std::stop_token stop) {
  if (!acquire(stop)) {
    return;
  }
  if (config_.callbacks.on_started_leading) {
    config_.callbacks.on_started_leading();
  }
  renew(stop);
  if (config_.callbacks.on_stopped_leading) {
    config_.callbacks.on_stopped_leading();
  }
}

}  // namespace kvc::runtime
