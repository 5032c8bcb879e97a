#pragma once
// GET /get_segments_detail (Mooncake 0.3.12+): the mounted memory segments, one per member.
//
// Validation (reference/contract.md §6): the listing is malformed when `segments` is missing or
// not an array, when a `segment_id` is empty or repeated, when a `client_id` or `segment_name` is
// empty, or when the sizes (or the allocators' used bytes) add up past 2^63-1. `[]` is a valid,
// empty listing. A listing with more than kMaxListedSegments entries or more than
// kMaxListingIdentifierBytes of identifiers is ListingTooLarge, so a status never carries an
// unbounded list.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/store/error.h"

namespace kvc::store {

inline constexpr std::size_t kMaxListedSegments = 5000;
inline constexpr std::size_t kMaxListingIdentifierBytes = std::size_t{512} << 10;

struct Segment {
  std::string segment_name;  // the member's host:port
  std::string segment_id;    // "<u64>-<u64>"
  std::string client_id;     // "<u64>-<u64>"
  std::string te_endpoint;   // transfer engine ip:port ("" when absent)
  std::string protocol;      // the configured protocol, e.g. "tcp"
  std::string status;        // OK, DRAINING, DRAINED, GRACEFULLY_UNMOUNTING, UNMOUNTING, UNDEFINED
  std::int64_t size_bytes = 0;
  std::optional<std::int64_t> allocator_used_bytes;
  std::optional<std::int64_t> allocator_capacity_bytes;
};

struct SegmentListing {
  std::vector<Segment> segments;  // in the master's order

  std::int64_t capacityBytes() const;  // Σ size_bytes
  std::int64_t usedBytes() const;      // Σ allocator_used_bytes (absent counts 0)
  const Segment* find(std::string_view segment_name) const;
};

StoreResult<SegmentListing> parseSegmentsDetail(std::string_view body);

}  // namespace kvc::store
