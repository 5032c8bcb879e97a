#include "kvc/common/json_parse.h"

#include <gtest/gtest.h>

#include <chrono>
#include <iterator>
#include <string>

namespace kvc {
namespace {

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(ParseJson, ReadsWhatJsonParseReads) {
  for (const char* text :
       {R"({"b": 1, "a": [true, null, -2, 3.5, 18446744073709551615, "x\u00e9"], "c": {}})",
        R"("just a string")", "42", "[]", R"({"k": 1, "j": 2, "k": 3})", " [1, {\"x\": [[]]}] "}) {
    auto parsed = parseJson(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status().message();
    EXPECT_EQ(*parsed, Json::parse(text)) << text;
    EXPECT_EQ(parsed->dump(), Json::parse(text).dump()) << text;  // the same key order
  }
}

TEST(ParseJson, ARepeatedKeyKeepsItsPlaceAndTakesTheLastValue) {
  auto parsed = parseJson(R"({"k": 1, "j": 2, "k": 3})");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->dump(), R"({"k":3,"j":2})");
}

TEST(ParseJson, RefusesWhatIsNotJson) {
  for (const char* text : {"", "{", "[1,]", "{\"a\" 1}", "tru", "1 2", "\"\xff\"", "nan"}) {
    auto parsed = parseJson(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), StatusCode::InvalidArgument);
    EXPECT_NO_THROW((void)Json(parsed.status().message()).dump());  // printable
  }
}

// Found by test/fuzz/fuzz_validation: a review of 10,000 nested brackets reached the backend
// admission, whose copy of the object recursed once per level and overflowed the stack (100,000
// levels do so in an optimised build too). Deeper than kMaxJsonDepth is refused up front.
TEST(ParseJson, RefusesNestingPastTheLimitAndNamesIt) {
  EXPECT_TRUE(parseJson(nested(kMaxJsonDepth)).ok());
  for (std::size_t depth : {kMaxJsonDepth + 1, std::size_t{100000}, std::size_t{4000000}}) {
    auto parsed = parseJson(nested(depth));
    ASSERT_FALSE(parsed.ok()) << depth;
    EXPECT_NE(parsed.status().message().find("kMaxJsonDepth"), std::string::npos)
        << parsed.status().message();
  }
  std::string objects;
  for (std::size_t i = 0; i <= kMaxJsonDepth; ++i) {
    objects += "{\"a\":";
  }
  objects += "1" + std::string(kMaxJsonDepth + 1, '}');
  EXPECT_FALSE(parseJson(objects).ok());
}

// Found by test/fuzz/fuzz_admission_review: an object of 20,000 short keys timed the parser out
// (each insert into an ordered object scanned every key: 100,000 keys took over two minutes).
TEST(ParseJson, WideObjectsParseInLinearTime) {
  std::string text = "{";
  for (int i = 0; i < 200000; ++i) {
    text += (i > 0 ? ",\"" : "\"") + std::to_string(i) + "\":" + std::to_string(i);
  }
  text += "}";
  const auto start = std::chrono::steady_clock::now();
  auto parsed = parseJson(text);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->size(), 200000u);
  EXPECT_EQ(parsed->begin().key(), "0");
  EXPECT_EQ((*parsed)["199999"], 199999);
}

TEST(JsonObjectBuilder, IndexesPastTheScannedSizeAndKeepsFirstPlaces) {
  Json object = {{"existing", 1}};
  JsonObjectBuilder members(object);
  for (int i = 0; i < 100; ++i) {
    members.member("k" + std::to_string(i)) = i;
  }
  members.member("existing") = 2;
  members.member("k5") = "five";
  members.member("k99") = "last";
  EXPECT_EQ(object.size(), 101u);
  EXPECT_EQ(object.begin().key(), "existing");
  EXPECT_EQ(object["existing"], 2);
  EXPECT_EQ(object["k5"], "five");
  EXPECT_EQ(object["k99"], "last");
  EXPECT_EQ(std::prev(object.end()).key(), "k99");
}

}  // namespace
}  // namespace kvc
