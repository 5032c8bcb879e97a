#include "kvc/common/base64.h"

#include <gtest/gtest.h>

#include <string>

namespace kvc {
namespace {

TEST(Base64Test, EncodesTheRfc4648Vectors) {
  EXPECT_EQ(base64Encode(""), "");
  EXPECT_EQ(base64Encode("f"), "Zg==");
  EXPECT_EQ(base64Encode("fo"), "Zm8=");
  EXPECT_EQ(base64Encode("foo"), "Zm9v");
  EXPECT_EQ(base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64Encode(std::string("\xff\xfe\x00", 3)), "//4A");
}

TEST(Base64Test, RoundTripsAndRefusesGarbage) {
  for (const std::string s : {"", "a", "ab", "abc", "abcd", "hello world\n"}) {
    auto decoded = base64Decode(base64Encode(s));
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, s);
  }
  EXPECT_EQ(*base64Decode("aGVs\nbG8="), "hello");  // PEM-style line breaks
  EXPECT_EQ(*base64Decode("aGVsbG8"), "hello");     // padding optional
  EXPECT_FALSE(base64Decode("a$b").ok());
  EXPECT_FALSE(base64Decode("aGVs=bG8").ok());  // data after padding
  EXPECT_FALSE(base64Decode("aGVsb").ok());     // a dangling 6-bit group
}

}  // namespace
}  // namespace kvc
