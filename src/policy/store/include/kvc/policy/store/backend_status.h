#pragma once
// A KVCacheBackend's status from what its master answered (contract §2.5–§2.7): endpoints,
// capacity, members, usedBy; LeaderAvailable, CapacityObserved, MembersMounted, PoolWrites and
// Deletable; the phase. Today for external backends (connection.external); a managed backend's
// controller adds what its workloads say. Pure: facts and readings in, the whole status out.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/backend.h"

namespace kvc::policy {

// One row of /get_segments_detail.
struct SegmentRow {
  std::string segment_id;
  std::string client_id;
  std::string segment_name;
  std::string te_endpoint;
  std::string protocol;
  std::string status;  // OK, DRAINING, …
  std::optional<std::int64_t> allocator_used_bytes;
};

struct BackendReading {
  std::string admin_address;  // "" when the backend publishes no Admin endpoint
  bool admin_tls = false;     // read over mutual TLS (an external backend naming a credential)

  enum class Health { Unreadable, NotServing, Serving };
  Health health = Health::Unreadable;
  std::string health_error;  // Unreadable: why
  std::string role;          // NotServing: what /health said
  std::string ha_state;

  // /metrics (read only while serving)
  bool metrics_read = false;
  std::string metrics_error;
  std::optional<std::int64_t> total_capacity_bytes;
  std::optional<std::int64_t> allocated_bytes;
  std::optional<std::int64_t> total_file_capacity_bytes;
  std::optional<std::int64_t> allocated_file_bytes;
  std::optional<std::int64_t> put_start_total;
  std::optional<std::int64_t> put_end_total;
  std::optional<std::int64_t> put_revoke_total;

  // /get_segments_detail (read only while serving)
  enum class Listing { NotRead, Failed, TooLarge, NotServed, Read };
  Listing listing = Listing::NotRead;
  std::string listing_error;
  std::vector<SegmentRow> segments;
};

struct BackendFacts {
  api::KVCacheBackend backend;  // spec, metadata, and the status as last written
  // The pools in status.usedBy that still exist (sorted); entries of pools definitely gone
  // were dropped (`dropped_stale`).
  std::vector<std::string> consumers;
  bool dropped_stale = false;
};

// "OK" -> "OK", "DRAINING" -> "Draining", "GRACEFULLY_UNMOUNTING" -> "GracefullyUnmounting",
// … ; an unknown value passes through.
std::string memberState(std::string_view segment_status);

api::KVCacheBackend::Status externalBackendStatus(const BackendFacts& facts,
                                                  const BackendReading& reading,
                                                  std::int64_t generation, std::string_view now);

}  // namespace kvc::policy
