#include "kvc/common/quantity.h"

#include <gtest/gtest.h>

namespace kvc {
namespace {

struct Case {
  const char* text;
  std::int64_t bytes;
};

TEST(Quantity, ParsesEverySuffix) {
  const Case cases[] = {
      {"0", 0},
      {"100", 100},
      {"8Gi", 8LL << 30},
      {"16Gi", 16LL << 30},
      {"512Mi", 512LL << 20},
      {"1Ki", 1024},
      {"1.5Ti", 3LL << 39},
      {"1Ei", 1LL << 60},
      {"16G", 16'000'000'000LL},
      {"1k", 1000},
      {"1M", 1'000'000},
      {"1e3", 1000},
      {"1E9", 1'000'000'000},
      {"500m", 1},  // fractions round up, as Quantity.Value() does
      {"1500m", 2},
      {"+7", 7},
      {"0.5Ki", 512},
      {"9223372036854775807", 9223372036854775807LL},
  };
  for (const Case& c : cases) {
    const Result<std::int64_t> parsed = parseQuantityBytes(c.text);
    ASSERT_TRUE(parsed.ok()) << c.text << ": " << parsed.status().message();
    EXPECT_EQ(*parsed, c.bytes) << c.text;
  }
}

TEST(Quantity, RefusesMalformedTextNamingIt) {
  for (const char* text :
       {"", "-1", "8GB", "Gi", "1.2.3", "8 Gi", "9223372036854775808", "8Ei", "1e", "0x10"}) {
    const Result<std::int64_t> parsed = parseQuantityBytes(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.status().message().find(std::string("\"") + text + "\""), std::string::npos)
        << parsed.status().message();
  }
}

TEST(Quantity, FormatsInTheLargestExactBinaryUnit) {
  EXPECT_EQ(formatBinarySI(0), "0");
  EXPECT_EQ(formatBinarySI(16LL << 30), "16Gi");
  EXPECT_EQ(formatBinarySI(1536LL << 20), "1536Mi");
  EXPECT_EQ(formatBinarySI(1000), "1000");
  EXPECT_EQ(formatBinarySI(1LL << 60), "1Ei");
}

TEST(Quantity, RoundTripsBinaryForms) {
  for (std::int64_t bytes : {1LL, 1024LL, 3LL << 20, 20LL << 40, (1LL << 62) + 1024}) {
    EXPECT_EQ(*parseQuantityBytes(formatBinarySI(bytes)), bytes);
  }
}

}  // namespace
}  // namespace kvc
