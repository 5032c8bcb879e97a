#include "internal/master_reader.h"

#include <spdlog/spdlog.h>

namespace kvc::controllers::internal {
namespace {

// Nothing answered: refused, reset, or the deadline passed with the connection open (a master
// that accepts and never answers).
template <typename R>
bool unanswered(const R& result) {
  return result.is(store::StoreErrorKind::Transport) ||
         result.is(store::StoreErrorKind::DeadlineExceeded);
}

}  // namespace

// A master's write count: its single writes, plus the objects of its batch writes when it counts
// them; absent when the single-write counter is (the master exports no write counters at all).
std::optional<std::int64_t> writes(std::optional<std::int64_t> single,
                                   std::optional<std::int64_t> batch_items) {
  return single ? std::optional<std::int64_t>(*single + batch_items.value_or(0)) : std::nullopt;
}

std::vector<policy::ObservedTenant> observedTenants(const std::vector<store::TenantQuota>& list) {
  std::vector<policy::ObservedTenant> out;
  out.reserve(list.size());
  for (const store::TenantQuota& entry : list) {
    out.push_back({entry.tenant_id, entry.requested_quota_bytes, entry.has_explicit_policy,
                   entry.effective_quota_bytes});
  }
  return out;
}

policy::BackendReading readBackend(store::AdminClient& client) {
  policy::BackendReading reading;
  reading.admin_address = client.address();
  auto health = client.health();
  if (!health.ok()) {
    reading.health = policy::BackendReading::Health::Unreadable;
    reading.health_error = health.error().message();
    return reading;
  }
  if (!health->service_ready) {
    reading.health = policy::BackendReading::Health::NotServing;
    reading.role = health->role;
    reading.ha_state = health->ha_state;
    return reading;
  }
  reading.health = policy::BackendReading::Health::Serving;
  auto metrics = client.metrics();
  if (metrics.ok()) {
    reading.metrics_read = true;
    reading.total_capacity_bytes = metrics->total_capacity_bytes;
    reading.allocated_bytes = metrics->allocated_bytes;
    reading.total_file_capacity_bytes = metrics->total_file_capacity_bytes;
    reading.allocated_file_bytes = metrics->allocated_file_size_bytes;
    // Single writes and the objects of batch writes (the engines' connectors write in batches).
    reading.put_start_total =
        writes(metrics->put_start_requests_total, metrics->batch_put_start_items_total);
    reading.put_end_total =
        writes(metrics->put_end_requests_total, metrics->batch_put_end_items_total);
    reading.put_revoke_total =
        writes(metrics->put_revoke_requests_total, metrics->batch_put_revoke_items_total);
  } else {
    reading.metrics_error = metrics.error().message();
  }
  auto segments = client.segments();
  if (segments.ok()) {
    reading.listing = policy::BackendReading::Listing::Read;
    for (const store::Segment& s : segments->segments) {
      reading.segments.push_back({s.segment_id, s.client_id, s.segment_name, s.te_endpoint,
                                  s.protocol, s.status, s.allocator_used_bytes});
    }
  } else if (segments.is(store::StoreErrorKind::RouteNotServed)) {
    reading.listing = policy::BackendReading::Listing::NotServed;
  } else if (segments.is(store::StoreErrorKind::ListingTooLarge)) {
    reading.listing = policy::BackendReading::Listing::TooLarge;
    reading.listing_error = segments.error().message();
  } else {
    reading.listing = policy::BackendReading::Listing::Failed;
    reading.listing_error = segments.error().message();
  }
  return reading;
}

void LedgerSession::read(policy::MasterReading& reading) {
  reading.admin_address = client_.address();
  auto list = client_.listTenantQuotas();
  if (list.ok()) {
    reading.ledger = policy::LedgerState::Read;
    reading.tenants = observedTenants(*list);
    return;
  }
  if (list.is(store::StoreErrorKind::MultiTenancyDisabled)) {
    reading.ledger = policy::LedgerState::NoLedger;
    return;
  }
  reading.ledger = policy::LedgerState::Unreachable;
  reading.ledger_error = list.error().message();
  reading.ledger_unanswered = unanswered(list);
}

std::vector<std::string> LedgerSession::apply(const policy::LedgerPlan& plan,
                                              policy::MasterReading& reading) {
  std::vector<std::string> written;
  if (reading.ledger != policy::LedgerState::Read) {
    return written;
  }
  for (const auto& [domain, bytes] : plan.puts) {
    auto put = client_.putTenantQuota(domain, bytes);
    if (put.ok()) {
      spdlog::info("master {}: reuse domain \"{}\" registered, {} bytes requested, {} granted",
                   client_.address(), domain, bytes, put->effective_quota_bytes);
      written.push_back(domain);
      continue;
    }
    if (put.is(store::StoreErrorKind::PersistFailed)) {
      if (reading.persist_error.empty()) {
        reading.persist_error = put.error().message();
      }
      continue;  // not applied; the other domains may still be
    }
    if (put.is(store::StoreErrorKind::MultiTenancyDisabled)) {
      reading.ledger = policy::LedgerState::NoLedger;
      return written;
    }
    reading.ledger_error = put.error().message();
    reading.ledger_unanswered = unanswered(put);
    return written;  // the master is failing: stop writing this pass
  }
  for (const std::string& domain : plan.deletes) {
    auto removed = client_.deleteTenantQuota(domain);
    if (removed.ok() || removed.is(store::StoreErrorKind::TenantNotFound)) {
      spdlog::info("master {}: reuse domain \"{}\" removed from the ledger", client_.address(),
                   domain);
      written.push_back(domain);
      continue;
    }
    if (removed.is(store::StoreErrorKind::TenantNotEmpty)) {
      reading.retained.push_back(domain);
      continue;
    }
    if (removed.is(store::StoreErrorKind::PersistFailed)) {
      if (reading.persist_error.empty()) {
        reading.persist_error = removed.error().message();
      }
      reading.removal_errors[domain] = removed.error().message();
      continue;
    }
    if (removed.is(store::StoreErrorKind::InvalidParams) ||
        removed.is(store::StoreErrorKind::UnexpectedStatus) ||
        removed.is(store::StoreErrorKind::MalformedBody)) {
      reading.removal_errors[domain] = removed.error().message();
      continue;
    }
    reading.ledger_error = removed.error().message();
    reading.ledger_unanswered = unanswered(removed);
    return written;
  }
  if (!written.empty()) {
    // The grants of every tenant moved with the recut: read the ledger back.
    auto list = client_.listTenantQuotas();
    if (list.ok()) {
      reading.tenants = observedTenants(*list);
    } else {
      reading.ledger_error = list.error().message();
      reading.ledger_unanswered = unanswered(list);
    }
  }
  return written;
}

void LedgerSession::scrape(policy::MasterReading& reading) {
  // A scrape replaces whatever the reading held: nothing of an earlier one may survive it.
  reading.allocatable_bytes.reset();
  reading.total_capacity_bytes.reset();
  reading.tenant_figures.clear();
  reading.occupancy_includes_in_flight = false;
  if (reading.ledger_unanswered) {
    reading.scraped = false;
    reading.scrape_error = "not attempted: " + reading.ledger_error;
    return;
  }
  auto metrics = client_.metrics();
  if (!metrics.ok()) {
    reading.scraped = false;
    reading.scrape_error = metrics.error().message();
    return;
  }
  reading.scraped = true;
  reading.scrape_error.clear();
  reading.allocatable_bytes = metrics->allocatable_capacity_bytes;
  reading.total_capacity_bytes = metrics->total_capacity_bytes;
  reading.occupancy_includes_in_flight =
      metrics->ledgerGeneration() == store::LedgerGeneration::Charged;
  for (const auto& [tenant, figures] : metrics->tenants) {
    policy::TenantFigures f;
    f.requested_bytes = figures.requested_bytes;
    f.effective_bytes = figures.effective_bytes;
    f.occupancy_bytes = figures.occupancyBytes();
    if (figures.over_quota) {
      f.over_quota = *figures.over_quota != 0;
    }
    if (figures.explicit_policy) {
      f.explicit_policy = *figures.explicit_policy != 0;
    }
    reading.tenant_figures[tenant] = f;
  }
}

}  // namespace kvc::controllers::internal
