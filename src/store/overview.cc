#include "kvc/store/overview.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

#include "kvc/common/columns.h"
#include "kvc/common/quantity.h"

namespace kvc::store {

StoreOverview readOverview(AdminClient& client) {
  // Each read stands alone; the order is the order of the table. When /health got no answer
  // at all, the other routes are not tried: each would wait for its own deadline in vain.
  auto health = client.health();
  if (health.is(StoreErrorKind::Transport) || health.is(StoreErrorKind::DeadlineExceeded)) {
    const StoreError skipped(health.error().kind(), "not read: the master did not answer /health");
    return StoreOverview{client.address(), std::move(health), skipped, skipped, skipped};
  }
  auto metrics = client.metrics();
  auto segments = client.segments();
  auto ledger = client.listTenantQuotas();
  return StoreOverview{client.address(), std::move(health), std::move(metrics), std::move(segments),
                       std::move(ledger)};
}

bool overviewHealthy(const StoreOverview& overview) {
  const bool ledger_answered =
      overview.ledger.ok() || overview.ledger.is(StoreErrorKind::MultiTenancyDisabled);
  return overview.health.ok() && overview.health->service_ready && overview.metrics.ok() &&
         overview.segments.ok() && ledger_answered;
}

namespace {

std::string figure(const std::optional<std::int64_t>& bytes) {
  return bytes ? humanBytes(*bytes) : std::string("(absent)");
}

Json errorJson(const StoreError& error) {
  Json out = {{"kind", std::string(storeErrorKindName(error.kind()))},
              {"message", error.message()}};
  out["httpStatus"] = error.httpStatus() != 0 ? Json(error.httpStatus()) : Json(nullptr);
  out["errorCode"] = error.errorCode() ? Json(*error.errorCode()) : Json(nullptr);
  return {{"error", std::move(out)}};
}

Json optionalJson(const std::optional<std::int64_t>& value) {
  return value ? Json(*value) : Json(nullptr);
}

// The head of the table: the master's health, then its capacity from the metrics.
std::vector<std::vector<std::string>> headRows(const StoreOverview& overview) {
  std::vector<std::vector<std::string>> head;
  if (overview.health.ok()) {
    const Health& health = *overview.health;
    std::string state = health.service_ready ? "serving (service_ready)" : "NOT READY";
    state += " — role " + (health.role.empty() ? std::string("?") : health.role) + ", ha_state " +
             (health.ha_state.empty() ? std::string("?") : health.ha_state);
    head.push_back({"Master", overview.admin_address, state});
  } else {
    head.push_back(
        {"Master", overview.admin_address, "UNREADABLE: " + overview.health.error().message()});
  }

  if (!overview.metrics.ok()) {
    head.push_back({"Metrics", "", "UNREADABLE: " + overview.metrics.error().message()});
    return head;
  }
  const StoreMetrics& m = *overview.metrics;
  std::string capacity = figure(m.total_capacity_bytes) + " total";
  if (m.total_capacity_bytes) {
    capacity += " (" + std::to_string(*m.total_capacity_bytes) + " B)";
  }
  capacity += ", " + figure(m.allocated_bytes) + " used";
  if (m.active_clients) {
    capacity += ", " + std::to_string(*m.active_clients) + " clients";
  }
  if (m.key_count) {
    capacity += ", " + std::to_string(*m.key_count) + " keys";
  }
  head.push_back({"Memory", "", capacity});
  if (m.total_file_capacity_bytes.value_or(0) > 0) {
    head.push_back({"Disk tier", "",
                    figure(m.total_file_capacity_bytes) + " total, " +
                        figure(m.allocated_file_size_bytes) + " used"});
  }
  if (m.allocatable_capacity_bytes) {
    head.push_back({"Allocatable", "",
                    humanBytes(*m.allocatable_capacity_bytes) + " for tenant quotas (" +
                        std::to_string(*m.allocatable_capacity_bytes) + " B)"});
  }
  return head;
}

// MEMBERS: the mounted segments, one row each.
std::string membersSection(const StoreOverview& overview) {
  if (!overview.segments.ok()) {
    return "MEMBERS: unreadable: " + overview.segments.error().message() + "\n";
  }
  const SegmentListing& listing = *overview.segments;
  std::string out = "MEMBERS: " + std::to_string(listing.segments.size()) + " segment(s), " +
                    humanBytes(listing.capacityBytes()) + " mounted, " +
                    humanBytes(listing.usedBytes()) + " allocated\n";
  if (!listing.segments.empty()) {
    std::vector<std::vector<std::string>> rows = {
        {"SEGMENT", "STATUS", "PROTOCOL", "SIZE", "USED", "TRANSFER ENDPOINT", "CLIENT"}};
    for (const Segment& s : listing.segments) {
      rows.push_back({s.segment_name, s.status, s.protocol, humanBytes(s.size_bytes),
                      figure(s.allocator_used_bytes), s.te_endpoint, s.client_id});
    }
    out += renderColumns(rows);
  }
  return out;
}

// One tenant's STATE cell: "over quota", "admission closed", both, or empty.
std::string tenantState(const TenantQuota& t) {
  std::string state;
  if (t.over_quota) {
    state = "over quota";
  }
  if (t.admission_closed.value_or(false)) {
    state += state.empty() ? "admission closed" : ", admission closed";
  }
  return state;
}

// TENANT LEDGER: the totals (flagging requests past the allocatable capacity, which the store
// recuts in proportion), then one row per tenant.
std::string ledgerSection(const StoreOverview& overview) {
  if (overview.ledger.is(StoreErrorKind::MultiTenancyDisabled)) {
    return "TENANT LEDGER: multi-tenancy is disabled on this master (409, error_code -1011): "
           "every client writes as tenant \"default\" and no quota is enforced\n";
  }
  if (!overview.ledger.ok()) {
    return "TENANT LEDGER: unreadable: " + overview.ledger.error().message() + "\n";
  }
  const auto& tenants = *overview.ledger;
  std::int64_t requested = 0;
  std::int64_t granted = 0;
  bool charged = false;
  for (const TenantQuota& t : tenants) {
    if (t.has_explicit_policy) {
      requested += t.requested_quota_bytes;
    }
    granted += t.effective_quota_bytes;
    charged = charged || (!t.used_bytes && t.charged_bytes);
  }
  std::string out = "TENANT LEDGER: " + std::to_string(tenants.size()) + " tenant(s), " +
                    humanBytes(requested) + " requested, " + humanBytes(granted) + " granted";
  if (overview.metrics.ok() && overview.metrics->allocatable_capacity_bytes &&
      requested > *overview.metrics->allocatable_capacity_bytes) {
    out += " (requests exceed the capacity: grants are cut in proportion)";
  }
  out += "\n";
  if (!tenants.empty()) {
    std::vector<std::vector<std::string>> rows = {{"TENANT", "REQUESTED", "GRANTED",
                                                   charged ? "USAGE (incl. in-flight)" : "USAGE",
                                                   "POLICY", "STATE"}};
    for (const TenantQuota& t : tenants) {
      rows.push_back({t.tenant_id, humanBytes(t.requested_quota_bytes),
                      humanBytes(t.effective_quota_bytes), figure(t.occupancyBytes()),
                      t.has_explicit_policy ? "explicit" : "none (orphan)", tenantState(t)});
    }
    out += renderColumns(rows);
  }
  return out;
}

}  // namespace

std::string renderOverviewTable(const StoreOverview& overview) {
  return renderColumns(headRows(overview)) + "\n" + membersSection(overview) + "\n" +
         ledgerSection(overview);
}

Json overviewToJson(const StoreOverview& overview) {
  Json out = Json::object();
  out["admin"] = overview.admin_address;
  out["healthy"] = overviewHealthy(overview);

  if (overview.health.ok()) {
    const Health& h = *overview.health;
    out["health"] = {{"serviceReady", h.service_ready},
                     {"status", h.status},
                     {"role", h.role},
                     {"haState", h.ha_state}};
  } else {
    out["health"] = errorJson(overview.health.error());
  }

  if (overview.metrics.ok()) {
    const StoreMetrics& m = *overview.metrics;
    out["capacity"] = {{"totalBytes", optionalJson(m.total_capacity_bytes)},
                       {"usedBytes", optionalJson(m.allocated_bytes)},
                       {"fileTotalBytes", optionalJson(m.total_file_capacity_bytes)},
                       {"fileUsedBytes", optionalJson(m.allocated_file_size_bytes)},
                       {"allocatableBytes", optionalJson(m.allocatable_capacity_bytes)},
                       {"activeClients", optionalJson(m.active_clients)},
                       {"keyCount", optionalJson(m.key_count)}};
  } else {
    out["capacity"] = errorJson(overview.metrics.error());
  }

  if (overview.segments.ok()) {
    Json segments = Json::array();
    for (const Segment& s : overview.segments->segments) {
      segments.push_back({{"segmentName", s.segment_name},
                          {"segmentId", s.segment_id},
                          {"clientId", s.client_id},
                          {"status", s.status},
                          {"protocol", s.protocol},
                          {"teEndpoint", s.te_endpoint},
                          {"sizeBytes", s.size_bytes},
                          {"usedBytes", optionalJson(s.allocator_used_bytes)}});
    }
    out["members"] = {{"capacityBytes", overview.segments->capacityBytes()},
                      {"usedBytes", overview.segments->usedBytes()},
                      {"segments", std::move(segments)}};
  } else {
    out["members"] = errorJson(overview.segments.error());
  }

  if (overview.ledger.ok()) {
    Json tenants = Json::array();
    for (const TenantQuota& t : *overview.ledger) {
      Json entry = {{"tenantId", t.tenant_id},
                    {"requestedBytes", t.requested_quota_bytes},
                    {"effectiveBytes", t.effective_quota_bytes},
                    {"occupancyBytes", optionalJson(t.occupancyBytes())},
                    {"overQuota", t.over_quota},
                    {"explicitPolicy", t.has_explicit_policy}};
      entry["admissionClosed"] = t.admission_closed ? Json(*t.admission_closed) : Json(nullptr);
      tenants.push_back(std::move(entry));
    }
    out["ledger"] = {{"multiTenancy", true}, {"tenants", std::move(tenants)}};
  } else if (overview.ledger.is(StoreErrorKind::MultiTenancyDisabled)) {
    out["ledger"] = {{"multiTenancy", false}};
  } else {
    out["ledger"] = errorJson(overview.ledger.error());
  }
  return out;
}

}  // namespace kvc::store
