// Watch decoding, object accessors and time formats (pure parts of client.h).
#include "kvc/kube/client.h"
#include "kvc/kube/object.h"
#include "kvc/kube/time.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace kvc::kube {
namespace {

std::vector<WatchEvent> feedAll(WatchDecoder& decoder, const std::vector<std::string>& chunks) {
  std::vector<WatchEvent> events;
  for (const std::string& chunk : chunks) {
    auto fed = decoder.feed(chunk, [&](WatchEvent&& e) {
      events.push_back(std::move(e));
      return true;
    });
    EXPECT_TRUE(fed.ok());
  }
  return events;
}

TEST(WatchDecoderTest, ReassemblesEventsSplitAcrossChunksAtAnyByte) {
  const std::string stream =
      R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}})"
      "\n"
      R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}})"
      "\n"
      R"({"type":"DELETED","object":{"metadata":{"name":"a","resourceVersion":"8"}}})"
      "\n";
  for (std::size_t cut = 1; cut < stream.size(); ++cut) {
    WatchDecoder decoder;
    auto events = feedAll(decoder, {stream.substr(0, cut), stream.substr(cut)});
    ASSERT_EQ(events.size(), 3U) << "cut at " << cut;
    EXPECT_EQ(events[0].type, WatchEventType::Added);
    EXPECT_EQ(object::name(events[0].object), "a");
    EXPECT_EQ(events[1].type, WatchEventType::Bookmark);
    EXPECT_EQ(object::resourceVersion(events[1].object), "7");
    EXPECT_EQ(events[2].type, WatchEventType::Deleted);
    EXPECT_FALSE(decoder.hasPartial());
  }
}

TEST(WatchDecoderTest, OneByteAtATime) {
  const std::string stream = R"({"type":"MODIFIED","object":{"a":1}})"
                             "\n"
                             R"({"type":"ERROR","object":{"kind":"Status","code":410}})"
                             "\n";
  std::vector<std::string> bytes;
  for (const char c : stream) {
    bytes.emplace_back(1, c);
  }
  WatchDecoder decoder;
  auto events = feedAll(decoder, bytes);
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].type, WatchEventType::Modified);
  EXPECT_EQ(events[1].type, WatchEventType::Error);
}

TEST(WatchDecoderTest, AGarbledLineIsADecodeError) {
  WatchDecoder decoder;
  auto fed = decoder.feed("{\"type\":\"ADDED\"\n", [](WatchEvent&&) { return true; });
  ASSERT_FALSE(fed.ok());
  EXPECT_EQ(fed.error().reason(), ErrorReason::Decode);
  EXPECT_FALSE(parseWatchEvent(R"({"type":"SURPRISE","object":{}})").ok());
}

// Found by test/fuzz/fuzz_watch: the parser's message quoted the bad line's bytes, so the
// error of a line that was not UTF-8 could not be written as JSON (dump() throws).
TEST(WatchDecoderTest, ADecodeErrorIsPrintableWhateverTheLine) {
  WatchDecoder decoder;
  auto fed = decoder.feed("{\"type\":\"ADDED\",\"object\":{\"a\":\xc3(}}\n",
                          [](WatchEvent&&) { return true; });
  ASSERT_FALSE(fed.ok());
  EXPECT_EQ(fed.error().reason(), ErrorReason::Decode);
  EXPECT_NO_THROW((void)Json(fed.error().message()).dump()) << fed.error().message();
}

// Events are decoded with the bounds of common/json_parse.h: nesting past kMaxJsonDepth is a
// Decode error, not a stack overflow later; a wide object (a ConfigMap of 100,000 keys) decodes
// in linear time.
TEST(WatchDecoderTest, EventsAreBoundedInDepthAndLinearInWidth) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto refused = parseWatchEvent(R"({"type":"ADDED","object":{"a":)" + deep + "}}");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("kMaxJsonDepth"), std::string::npos)
      << refused.error().message();

  std::string data = "{";
  for (int i = 0; i < 100000; ++i) {
    data += (i > 0 ? ",\"k" : "\"k") + std::to_string(i) + "\":\"v\"";
  }
  data += "}";
  const auto start = std::chrono::steady_clock::now();
  auto wide = parseWatchEvent(R"({"type":"MODIFIED","object":{"data":)" + data + "}}");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(wide->object["data"].size(), 100000u);
}

TEST(WatchDecoderTest, DecliningStopsAtThatEvent) {
  WatchDecoder decoder;
  int seen = 0;
  auto fed = decoder.feed(std::string(R"({"type":"ADDED","object":{}})") + "\n" +
                              R"({"type":"ADDED","object":{}})" + "\n",
                          [&](WatchEvent&&) { return ++seen < 1; });
  ASSERT_TRUE(fed.ok());
  EXPECT_EQ(seen, 1);
  EXPECT_TRUE(decoder.declined());
}

TEST(ObjectTest, KeysFollowMetaNamespaceKeyFunc) {
  const Json pod = {{"metadata", {{"name", "p"}, {"namespace", "ns"}, {"generation", 3}}}};
  EXPECT_EQ(object::key(pod), "ns/p");
  EXPECT_EQ(object::generation(pod), 3);
  EXPECT_EQ(object::key(Json{{"metadata", {{"name", "pool"}}}}), "pool");
  EXPECT_EQ(object::splitKey("ns/p"), std::make_pair(std::string("ns"), std::string("p")));
  EXPECT_EQ(object::splitKey("pool"), std::make_pair(std::string(), std::string("pool")));
  EXPECT_FALSE(object::isDeleting(pod));
  EXPECT_TRUE(
      object::isDeleting(Json{{"metadata", {{"deletionTimestamp", "2024-01-01T00:00:00Z"}}}}));
}

TEST(TimeTest, MicroTimeRoundTrips) {
  using namespace std::chrono;
  const system_clock::time_point t =
      system_clock::time_point(seconds(1714564800)) + microseconds(123456);
  EXPECT_EQ(formatMicroTime(t), "2024-05-01T12:00:00.123456Z");
  EXPECT_EQ(formatTime(t), "2024-05-01T12:00:00Z");
  auto parsed = parseTime("2024-05-01T12:00:00.123456Z");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, t);
  auto offset = parseTime("2024-05-01T14:00:00+02:00");
  ASSERT_TRUE(offset.ok());
  EXPECT_EQ(*offset, system_clock::time_point(seconds(1714564800)));
  EXPECT_FALSE(parseTime("yesterday").ok());
}

}  // namespace
}  // namespace kvc::kube
