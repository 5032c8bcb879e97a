#include "fake_master.h"

#include <optional>

namespace kvc::testing {

using store::StoreError;
using store::StoreErrorKind;

struct FakeMaster::State {
  struct Fault {
    std::string line;
    StoreError error;
    int times;  // < 0: always
  };

  std::shared_ptr<IoLog> log;
  mutable std::mutex mutex;
  bool serving = true;
  bool multi_tenancy = true;
  std::int64_t capacity = 16LL << 30;
  std::vector<store::Segment> segments;
  std::map<std::string, std::int64_t> ledger;   // explicit policies: requested bytes
  std::map<std::string, std::int64_t> charged;  // held bytes
  std::vector<Fault> faults;
  std::vector<std::string> asked;

  // Logs the call; its injected failure, if any. Lock held.
  std::optional<StoreError> call(const std::string& line) {
    if (log) {
      log->add(line);
    }
    for (auto it = faults.begin(); it != faults.end(); ++it) {
      if (it->line == line) {
        StoreError error = it->error;
        if (it->times > 0 && --it->times == 0) {
          faults.erase(it);
        }
        return error;
      }
    }
    return std::nullopt;
  }

  std::int64_t effective(const std::string& id) const {
    auto it = ledger.find(id);
    if (it == ledger.end()) {
      return 0;
    }
    long double sum = 0;
    for (const auto& [tenant, bytes] : ledger) {
      sum += static_cast<long double>(bytes);
    }
    if (sum <= static_cast<long double>(capacity)) {
      return it->second;
    }
    return static_cast<std::int64_t>(static_cast<long double>(it->second) *
                                     static_cast<long double>(capacity) / sum);
  }

  store::TenantQuota entry(const std::string& id) const {
    store::TenantQuota q;
    q.tenant_id = id;
    q.requested_quota_bytes = ledger.count(id) > 0 ? ledger.at(id) : 0;
    q.effective_quota_bytes = effective(id);
    q.has_explicit_policy = ledger.count(id) > 0;
    q.charged_bytes = charged.count(id) > 0 ? charged.at(id) : 0;
    q.admission_closed = false;
    q.over_quota = q.charged_bytes.value_or(0) > q.effective_quota_bytes;
    return q;
  }
};

// store::AdminClient
class FakeMaster::Client final : public store::AdminClient {
public:
  Client(std::shared_ptr<State> state, std::string address, bool reachable)
      : state_(std::move(state)), address_(std::move(address)), reachable_(reachable) {}

  const std::string& address() const override { return address_; }

  store::StoreResult<store::Health> health() override {
    if (auto error = call("GET master/health")) {
      return *error;
    }
    std::lock_guard<std::mutex> guard(state_->mutex);
    store::Health h;
    h.service_ready = state_->serving;
    h.status = "ok";
    h.role = state_->serving ? "leader" : "standby";
    h.ha_state = state_->serving ? "serving" : "standby";
    return h;
  }

  store::StoreResult<store::StoreMetrics> metrics() override {
    if (auto error = call("GET master/metrics")) {
      return *error;
    }
    std::lock_guard<std::mutex> guard(state_->mutex);
    store::StoreMetrics m;
    m.total_capacity_bytes = state_->capacity;
    m.allocated_bytes = 0;
    m.put_start_requests_total = 0;
    m.put_end_requests_total = 0;
    m.put_revoke_requests_total = 0;
    if (state_->multi_tenancy) {
      m.allocatable_capacity_bytes = state_->capacity;
      std::int64_t requested = 0;
      std::int64_t effective = 0;
      for (const auto& [id, bytes] : state_->ledger) {
        const store::TenantQuota q = state_->entry(id);
        store::TenantMetrics t;
        t.requested_bytes = q.requested_quota_bytes;
        t.effective_bytes = q.effective_quota_bytes;
        t.explicit_policy = 1;
        t.over_quota = q.over_quota ? 1 : 0;
        t.charged_bytes = q.charged_bytes;
        t.admission_closed = 0;
        m.tenants[id] = t;
        requested += q.requested_quota_bytes;
        effective += q.effective_quota_bytes;
      }
      m.requested_bytes_sum = requested;
      m.effective_bytes_sum = effective;
    }
    return m;
  }

  store::StoreResult<store::SegmentListing> segments() override {
    if (auto error = call("GET master/get_segments_detail")) {
      return *error;
    }
    std::lock_guard<std::mutex> guard(state_->mutex);
    return store::SegmentListing{state_->segments};
  }

  store::StoreResult<std::vector<store::TenantQuota>> listTenantQuotas() override {
    if (auto error = call("LIST master/tenant_quotas")) {
      return *error;
    }
    std::lock_guard<std::mutex> guard(state_->mutex);
    if (!state_->multi_tenancy) {
      return disabled();
    }
    std::vector<store::TenantQuota> out;
    for (const auto& [id, bytes] : state_->ledger) {
      out.push_back(state_->entry(id));
    }
    return out;
  }

  store::StoreResult<store::TenantQuota> getTenantQuota(std::string_view id) override {
    if (auto error = call("GET master/tenant_quotas/" + std::string(id))) {
      return *error;
    }
    std::lock_guard<std::mutex> guard(state_->mutex);
    if (!state_->multi_tenancy) {
      return disabled();
    }
    if (state_->ledger.count(std::string(id)) == 0) {
      return StoreError(StoreErrorKind::TenantNotFound, "tenant not found", 404,
                        store::kErrObjectNotFound);
    }
    return state_->entry(std::string(id));
  }

  store::StoreResult<store::TenantQuota> putTenantQuota(std::string_view id,
                                                        std::int64_t bytes) override {
    if (auto error = call("PUT master/tenant_quotas/" + std::string(id))) {
      return *error;
    }
    std::lock_guard<std::mutex> guard(state_->mutex);
    if (!state_->multi_tenancy) {
      return disabled();
    }
    state_->ledger[std::string(id)] = bytes;
    return state_->entry(std::string(id));
  }

  store::StoreResult<std::optional<store::TenantQuota>> deleteTenantQuota(
      std::string_view id) override {
    if (auto error = call("DELETE master/tenant_quotas/" + std::string(id))) {
      return *error;
    }
    std::lock_guard<std::mutex> guard(state_->mutex);
    if (!state_->multi_tenancy) {
      return disabled();
    }
    const std::string tenant(id);
    if (state_->ledger.count(tenant) == 0) {
      return StoreError(StoreErrorKind::TenantNotFound, "tenant not found", 404,
                        store::kErrObjectNotFound);
    }
    if (state_->charged.count(tenant) > 0 && state_->charged.at(tenant) > 0) {
      return StoreError(StoreErrorKind::TenantNotEmpty,
                        "removing the quota of reuse domain \"" + tenant + "\": TENANT_NOT_EMPTY",
                        409, store::kErrTenantNotEmpty);
    }
    store::TenantQuota gone = state_->entry(tenant);
    state_->ledger.erase(tenant);
    return std::optional<store::TenantQuota>(gone);
  }

private:
  static StoreError disabled() {
    return StoreError(StoreErrorKind::MultiTenancyDisabled,
                      "the master runs without multi-tenancy (UNAVAILABLE_IN_CURRENT_MODE)", 409,
                      store::kErrUnavailableInCurrentMode);
  }

  std::optional<StoreError> call(const std::string& line) {
    if (!reachable_) {
      return StoreError(StoreErrorKind::Transport,
                        "connecting to " + address_ + ": connection refused");
    }
    std::lock_guard<std::mutex> guard(state_->mutex);
    return state_->call(line);
  }

  std::shared_ptr<State> state_;
  std::string address_;
  bool reachable_;
};

FakeMaster::FakeMaster(std::string address, std::shared_ptr<IoLog> log)
    : state_(std::make_shared<State>()), address_(std::move(address)) {
  state_->log = std::move(log);
}

FakeMaster::~FakeMaster() = default;

FakeMaster::Factory FakeMaster::clients() {
  return [state = state_, address = address_](
             const std::string& asked) -> Result<std::unique_ptr<store::AdminClient>> {
    {
      std::lock_guard<std::mutex> guard(state->mutex);
      state->asked.push_back(asked);
    }
    return std::unique_ptr<store::AdminClient>(
        std::make_unique<Client>(state, asked, asked == address));
  };
}

void FakeMaster::setServing(bool serving) {
  std::lock_guard<std::mutex> guard(state_->mutex);
  state_->serving = serving;
}

void FakeMaster::setCapacity(std::int64_t bytes) {
  std::lock_guard<std::mutex> guard(state_->mutex);
  state_->capacity = bytes;
}

void FakeMaster::setMultiTenancy(bool enabled) {
  std::lock_guard<std::mutex> guard(state_->mutex);
  state_->multi_tenancy = enabled;
}

void FakeMaster::setSegments(std::vector<store::Segment> segments) {
  std::lock_guard<std::mutex> guard(state_->mutex);
  state_->segments = std::move(segments);
}

void FakeMaster::setTenant(const std::string& id, std::int64_t requested_bytes) {
  std::lock_guard<std::mutex> guard(state_->mutex);
  state_->ledger[id] = requested_bytes;
}

void FakeMaster::setCharged(const std::string& id, std::int64_t bytes) {
  std::lock_guard<std::mutex> guard(state_->mutex);
  state_->charged[id] = bytes;
}

void FakeMaster::failNext(std::string line, StoreError error, int times) {
  std::lock_guard<std::mutex> guard(state_->mutex);
  state_->faults.push_back({std::move(line), std::move(error), times});
}

void FakeMaster::failAlways(std::string line, StoreError error) {
  std::lock_guard<std::mutex> guard(state_->mutex);
  state_->faults.push_back({std::move(line), std::move(error), -1});
}

void FakeMaster::clearFaults() {
  std::lock_guard<std::mutex> guard(state_->mutex);
  state_->faults.clear();
}

std::map<std::string, std::int64_t> FakeMaster::requested() const {
  std::lock_guard<std::mutex> guard(state_->mutex);
  return state_->ledger;
}

std::int64_t FakeMaster::effective(const std::string& id) const {
  std::lock_guard<std::mutex> guard(state_->mutex);
  return state_->effective(id);
}

std::vector<std::string> FakeMaster::addressesAsked() const {
  std::lock_guard<std::mutex> guard(state_->mutex);
  return state_->asked;
}

}  // namespace kvc::testing
