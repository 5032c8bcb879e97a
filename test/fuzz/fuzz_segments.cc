// The master's /get_segments_detail decoder (store/segments.h) on any body: refused with a
// MalformedBody or ListingTooLarge, or a listing within the documented limits — identifiers
// present and unique, sizes that add up below 2^63 — that, written back as the master writes
// it, reads back the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "kvc/common/json.h"
#include "kvc/store/segments.h"

namespace {

using kvc::Json;
using kvc::store::Segment;

void check(bool condition) {
  if (!condition) {
    std::abort();
  }
}

// A refusal's message ends up in a status condition: it must be printable as JSON (dump()
// throws on bytes that are not UTF-8).
void checkMessage(const std::string& message) {
  check(!message.empty());
  (void)kvc::Json(message).dump();
}

Json encode(const kvc::store::SegmentListing& listing) {
  Json segments = Json::array();
  for (const Segment& s : listing.segments) {
    Json entry = {{"segment_name", s.segment_name}, {"segment_id", s.segment_id},
                  {"client_id", s.client_id},       {"te_endpoint", s.te_endpoint},
                  {"protocol", s.protocol},         {"status", s.status},
                  {"size_bytes", s.size_bytes}};
    if (s.allocator_used_bytes) {
      entry["allocator_used_bytes"] = *s.allocator_used_bytes;
    }
    if (s.allocator_capacity_bytes) {
      entry["allocator_capacity_bytes"] = *s.allocator_capacity_bytes;
    }
    segments.push_back(std::move(entry));
  }
  return {{"segments", std::move(segments)}};
}

bool same(const Segment& a, const Segment& b) {
  return a.segment_name == b.segment_name && a.segment_id == b.segment_id &&
         a.client_id == b.client_id && a.te_endpoint == b.te_endpoint && a.protocol == b.protocol &&
         a.status == b.status && a.size_bytes == b.size_bytes &&
         a.allocator_used_bytes == b.allocator_used_bytes &&
         a.allocator_capacity_bytes == b.allocator_capacity_bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto listing = kvc::store::parseSegmentsDetail(body);
  if (!listing.ok()) {
    check(listing.error().kind() == kvc::store::StoreErrorKind::MalformedBody ||
          listing.error().kind() == kvc::store::StoreErrorKind::ListingTooLarge);
    checkMessage(listing.error().message());
    return 0;
  }
  check(listing->segments.size() <= kvc::store::kMaxListedSegments);
  std::set<std::string> ids;
  for (const Segment& segment : listing->segments) {
    check(!segment.segment_id.empty() && !segment.client_id.empty() &&
          !segment.segment_name.empty());
    check(ids.insert(segment.segment_id).second);
    check(segment.size_bytes >= 0);
    check(listing->find(segment.segment_name) != nullptr);
  }
  check(listing->capacityBytes() >= 0);
  check(listing->usedBytes() >= 0);
  auto again = kvc::store::parseSegmentsDetail(encode(*listing).dump());
  check(again.ok() && again->segments.size() == listing->segments.size());
  for (std::size_t i = 0; i < listing->segments.size(); ++i) {
    check(same(listing->segments[i], again->segments[i]));
  }
  return 0;
}
