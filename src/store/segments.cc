#include "kvc/store/segments.h"

#include <cstdint>
#include <unordered_set>

#include "internal/json_fields.h"

namespace kvc::store {

std::int64_t SegmentListing::capacityBytes() const {
  std::int64_t total = 0;
  for (const Segment& segment : segments) {
    total += segment.size_bytes;
  }
  return total;
}

std::int64_t SegmentListing::usedBytes() const {
  std::int64_t total = 0;
  for (const Segment& segment : segments) {
    total += segment.allocator_used_bytes.value_or(0);
  }
  return total;
}

const Segment* SegmentListing::find(std::string_view segment_name) const {
  for (const Segment& segment : segments) {
    if (segment.segment_name == segment_name) {
      return &segment;
    }
  }
  return nullptr;
}

StoreResult<SegmentListing> parseSegmentsDetail(std::string_view body) {
  constexpr std::string_view kWhat = "/get_segments_detail";
  auto parsed = internal::parseJsonBody(body, kWhat);
  if (!parsed.ok()) {
    return parsed.error();
  }
  const Json& obj = *parsed;
  if (!obj.is_object()) {
    return internal::malformed(kWhat, "not a JSON object: " + excerpt(body));
  }
  const auto list = obj.find("segments");
  if (list == obj.end() || !list->is_array()) {
    return internal::malformed(kWhat, "\"segments\" is missing or not an array");
  }
  if (list->size() > kMaxListedSegments) {
    return StoreError(StoreErrorKind::ListingTooLarge,
                      std::string(kWhat) + ": " + std::to_string(list->size()) +
                          " segments listed, more than " + std::to_string(kMaxListedSegments),
                      200);
  }

  SegmentListing listing;
  listing.segments.reserve(list->size());
  std::unordered_set<std::string> ids;
  std::size_t identifier_bytes = 0;
  std::int64_t capacity = 0;
  std::int64_t used_total = 0;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& entry = (*list)[i];
    const std::string where = std::string(kWhat) + " segments[" + std::to_string(i) + "]";
    if (!entry.is_object()) {
      return internal::malformed(where, "not an object");
    }
    Segment segment;
    for (auto [key, field] : {std::pair{"segment_name", &segment.segment_name},
                              std::pair{"segment_id", &segment.segment_id},
                              std::pair{"client_id", &segment.client_id}}) {
      auto value = internal::readString(entry, key, where, /*required=*/false);
      if (!value.ok()) {
        return value.error();
      }
      if (value->empty()) {
        return internal::malformed(where, std::string("empty or missing \"") + key + "\"");
      }
      *field = std::move(*value);
    }
    for (auto [key, field] :
         {std::pair{"te_endpoint", &segment.te_endpoint}, std::pair{"protocol", &segment.protocol},
          std::pair{"status", &segment.status}}) {
      auto value = internal::readString(entry, key, where, /*required=*/false);
      if (!value.ok()) {
        return value.error();
      }
      *field = std::move(*value);
    }
    auto size = internal::requireCount(entry, "size_bytes", where);
    if (!size.ok()) {
      return size.error();
    }
    segment.size_bytes = *size;
    if (segment.size_bytes > INT64_MAX - capacity) {
      return internal::malformed(where, "the sizes add up past 2^63-1");
    }
    capacity += segment.size_bytes;
    auto used = internal::optionalCount(entry, "allocator_used_bytes", where);
    if (!used.ok()) {
      return used.error();
    }
    segment.allocator_used_bytes = *used;
    // usedBytes() adds these up, as capacityBytes() does the sizes.
    if (used->value_or(0) > INT64_MAX - used_total) {
      return internal::malformed(where, "the allocators' used bytes add up past 2^63-1");
    }
    used_total += used->value_or(0);
    auto cap = internal::optionalCount(entry, "allocator_capacity_bytes", where);
    if (!cap.ok()) {
      return cap.error();
    }
    segment.allocator_capacity_bytes = *cap;

    if (!ids.insert(segment.segment_id).second) {
      return internal::malformed(where, "segment_id " + segment.segment_id + " listed twice");
    }
    identifier_bytes +=
        segment.segment_id.size() + segment.client_id.size() + segment.segment_name.size();
    if (identifier_bytes > kMaxListingIdentifierBytes) {
      return StoreError(StoreErrorKind::ListingTooLarge,
                        std::string(kWhat) + ": the identifiers pass " +
                            std::to_string(kMaxListingIdentifierBytes) + " bytes",
                        200);
    }
    listing.segments.push_back(std::move(segment));
  }
  return listing;
}

}  // namespace kvc::store
