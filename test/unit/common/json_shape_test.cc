// The pre-parse shape check of JSON bodies (kvc/common/json_shape.h).
#include "kvc/common/json_shape.h"

#include <gtest/gtest.h>

#include <string>

namespace kvc {
namespace {

constexpr JsonShapeLimits kLimits{4, 20, 1000};

std::string limitOf(const std::string& text, const JsonShapeLimits& limits = kLimits) {
  auto refusal = checkJsonShape(text, limits);
  return refusal ? std::string(refusal->limit) : "";
}

TEST(JsonShapeTest, CountsDepthOutsideStringsOnly) {
  EXPECT_EQ(limitOf("[[[[1]]]]"), "");
  EXPECT_EQ(limitOf("[[[[[1]]]]]"), "json_depth");
  EXPECT_EQ(limitOf(R"({"a": {"b": {"c": {"d": 1}}}})"), "");
  EXPECT_EQ(limitOf(R"({"a": {"b": {"c": {"d": {}}}}})"), "json_depth");
  EXPECT_EQ(limitOf(R"(["[[[[[[[[", "{{{{{{{{{{\"[[[[["])"), "");  // brackets inside strings
  // 100,000 nested arrays are refused at the first level past the limit.
  auto refusal = checkJsonShape(std::string(100'000, '['), {512, 0, 0});
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->message, "the JSON nests deeper than 512 levels");
}

TEST(JsonShapeTest, CountsContainersElementsKeysAndValues) {
  // {"a":1,"b":[2,3]}: the object, 2 keys, 2 values (one an array), the array's 2 elements.
  EXPECT_EQ(limitOf(R"({"a":1,"b":[2,3]})", {8, 7, 0}), "");
  EXPECT_EQ(limitOf(R"({"a":1,"b":[2,3]})", {8, 6, 0}), "json_values");
  EXPECT_EQ(limitOf("[]", {8, 1, 0}), "");
  EXPECT_EQ(limitOf("[ ]", {8, 1, 0}), "");
  EXPECT_EQ(limitOf("[0]", {8, 1, 0}), "json_values");
  EXPECT_EQ(limitOf(R"(["a,b:c"])", {8, 2, 0}), "");
}

TEST(JsonShapeTest, ChargesEachKeyTheMembersBeforeItInItsObject) {
  // Keys of 1 byte cost 33 per member before them: 3 keys cost 33 + 66 = 99.
  EXPECT_EQ(limitOf(R"({"a":0,"b":0,"c":0})", {8, 0, 99}), "");
  EXPECT_EQ(limitOf(R"({"a":0,"b":0,"c":0})", {8, 0, 98}), "json_keys");
  // Members of different objects do not add up, and string values are not keys.
  EXPECT_EQ(limitOf(R"([{"a":"x","b":"y"},{"a":"x","b":"y"}])", {8, 0, 66}), "");
}

TEST(JsonShapeTest, NoLimitsNoScanAndMalformedTextIsMeasuredAsFarAsItGoes) {
  EXPECT_EQ(limitOf(std::string(1000, '['), {}), "");
  EXPECT_EQ(limitOf("]]]]}}}"), "");
  EXPECT_EQ(limitOf("[\"unterminated"), "");
  EXPECT_EQ(limitOf("[\"\\\"[[[[[[\"]"), "");  // an escaped quote does not end the string
}

}  // namespace
}  // namespace kvc
