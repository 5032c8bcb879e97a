#include "kvc/store/segments.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "fixtures.h"
#include "kvc/common/json.h"

namespace kvc::store {
namespace {

using testing::kCurrent;
using testing::kLegacy;
using testing::readFixture;

TEST(SegmentsTest, RecordedListingOfTwoMembersAddsUpToTheirSegments) {
  for (const char* version : {kCurrent, kLegacy}) {
    auto listing = parseSegmentsDetail(readFixture(version, "segments_detail.json"));
    ASSERT_TRUE(listing.ok()) << version << ": " << listing.error().message();
    ASSERT_EQ(listing->segments.size(), 2u) << version;
    EXPECT_EQ(listing->capacityBytes(), 134217728) << version;
    for (const Segment& segment : listing->segments) {
      EXPECT_EQ(segment.size_bytes, 67108864);
      EXPECT_EQ(segment.status, "OK");
      EXPECT_EQ(segment.protocol, "tcp");
      EXPECT_EQ(segment.segment_name.rfind("127.0.0.1:", 0), 0u) << segment.segment_name;
      EXPECT_EQ(segment.te_endpoint.rfind("127.0.0.1:", 0), 0u) << segment.te_endpoint;
      EXPECT_FALSE(segment.segment_id.empty());
      EXPECT_FALSE(segment.client_id.empty());
      EXPECT_EQ(segment.allocator_capacity_bytes, 67108864);
    }
    EXPECT_NE(listing->find(listing->segments[1].segment_name), nullptr);
    EXPECT_EQ(listing->find("10.0.0.1:1"), nullptr);
  }
}

TEST(SegmentsTest, RecordedEmptyListingIsValid) {
  auto listing = parseSegmentsDetail(readFixture(kCurrent, "segments_detail_empty.json"));
  ASSERT_TRUE(listing.ok()) << listing.error().message();
  EXPECT_TRUE(listing->segments.empty());
  EXPECT_EQ(listing->capacityBytes(), 0);
}

Json validSegment(const std::string& id) {
  return {{"segment_name", "127.0.0.1:" + id},
          {"segment_id", "1-" + id},
          {"client_id", "2-" + id},
          {"size_bytes", 1024},
          {"status", "OK"},
          {"allocator_used_bytes", 0}};
}

StoreErrorKind failureOf(const Json& body) {
  auto listing = parseSegmentsDetail(body.dump());
  EXPECT_FALSE(listing.ok()) << body.dump();
  return listing.ok() ? StoreErrorKind::Transport : listing.error().kind();
}

TEST(SegmentsTest, ListingRulesOfTheContract) {
  EXPECT_EQ(failureOf(Json{{"total_segments", 0}}), StoreErrorKind::MalformedBody);
  EXPECT_EQ(failureOf(Json{{"segments", Json::object()}}), StoreErrorKind::MalformedBody);
  EXPECT_EQ(failureOf(Json::array()), StoreErrorKind::MalformedBody);

  for (const char* field : {"segment_id", "client_id", "segment_name"}) {
    Json empty = validSegment("1");
    empty[field] = "";
    EXPECT_EQ(failureOf(Json{{"segments", {empty}}}), StoreErrorKind::MalformedBody) << field;
    Json missing = validSegment("1");
    missing.erase(field);
    EXPECT_EQ(failureOf(Json{{"segments", {missing}}}), StoreErrorKind::MalformedBody) << field;
  }
  Json twin = validSegment("2");
  twin["segment_id"] = "1-1";
  EXPECT_EQ(failureOf(Json{{"segments", {validSegment("1"), twin}}}),
            StoreErrorKind::MalformedBody);

  for (const Json& size : {Json(-1), Json(1.5), Json("1024"), Json(nullptr)}) {
    Json bad = validSegment("1");
    bad["size_bytes"] = size;
    EXPECT_EQ(failureOf(Json{{"segments", {bad}}}), StoreErrorKind::MalformedBody) << size;
  }
}

TEST(SegmentsTest, SameSegmentNameTwiceIsAllowed) {
  // Seen on a real master: a member restarted under its name is listed next to its old mount
  // until the old client expires.
  Json again = validSegment("2");
  again["segment_name"] = "127.0.0.1:1";
  auto listing = parseSegmentsDetail(Json{{"segments", {validSegment("1"), again}}}.dump());
  ASSERT_TRUE(listing.ok()) << listing.error().message();
  EXPECT_EQ(listing->capacityBytes(), 2048);
}

TEST(SegmentsTest, ListingPastTheLimitsIsTooLarge) {
  Json many = Json::array();
  for (std::size_t i = 0; i <= kMaxListedSegments; ++i) {
    many.push_back(validSegment(std::to_string(i)));
  }
  EXPECT_EQ(failureOf(Json{{"segments", many}}), StoreErrorKind::ListingTooLarge);

  Json long_names = Json::array();
  for (int i = 0; i < 3; ++i) {
    Json segment = validSegment(std::to_string(i));
    segment["segment_name"] = std::string(200 * 1024, 'a' + i);
    long_names.push_back(segment);
  }
  EXPECT_EQ(failureOf(Json{{"segments", long_names}}), StoreErrorKind::ListingTooLarge);
}

TEST(SegmentsTest, UsedBytesAreOptional) {
  Json segment = validSegment("1");
  segment.erase("allocator_used_bytes");
  auto listing = parseSegmentsDetail(Json{{"segments", {segment}}}.dump());
  ASSERT_TRUE(listing.ok());
  EXPECT_FALSE(listing->segments[0].allocator_used_bytes.has_value());
  EXPECT_EQ(listing->usedBytes(), 0);
}

// Found by test/fuzz/fuzz_segments: each figure below 2^63 passed, and usedBytes() overflowed
// adding them up (undefined behaviour; `kvcache store` prints the sum).
TEST(SegmentsTest, UsedBytesAddingUpPast2To63AreMalformed) {
  Json big = validSegment("1");
  big["allocator_used_bytes"] = INT64_MAX;
  Json more = validSegment("2");
  more["allocator_used_bytes"] = 1;
  EXPECT_EQ(failureOf(Json{{"segments", {big, more}}}), StoreErrorKind::MalformedBody);
  auto one = parseSegmentsDetail(Json{{"segments", {big}}}.dump());
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->usedBytes(), INT64_MAX);
}

// Found by test/fuzz/fuzz_segments: a body that is not JSON was quoted byte for byte into the
// message, and a message that is not UTF-8 cannot be written into a status condition.
TEST(SegmentsTest, MessagesStayUtf8WhateverTheBody) {
  auto listing = parseSegmentsDetail("{\"segments\": [\xff\xfe\x8e]}");
  ASSERT_FALSE(listing.ok());
  EXPECT_NO_THROW((void)Json(listing.error().message()).dump()) << listing.error().message();
}

// A body nested deeper than kMaxJsonDepth is refused before anything recurses into it (dumping
// a field's value into the message overflowed the stack at 100,000 levels).
TEST(SegmentsTest, DeeplyNestedBodyIsMalformed) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto listing = parseSegmentsDetail(R"({"segments": [{"size_bytes": )" + deep + "}]}");
  ASSERT_FALSE(listing.ok());
  EXPECT_EQ(listing.error().kind(), StoreErrorKind::MalformedBody);
  EXPECT_NE(listing.error().message().find("kMaxJsonDepth"), std::string::npos)
      << listing.error().message();
}

}  // namespace
}  // namespace kvc::store
