#include "kvc/common/text.h"

#include <gtest/gtest.h>

#include <string>

namespace kvc {
namespace {

std::size_t runes(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char c : text) {
    n += (c & 0xC0) != 0x80 ? 1 : 0;
  }
  return n;
}

TEST(ExcerptTest, ShortBodiesPassOnOneLine) {
  EXPECT_EQ(excerpt("  404 Not Found\r\n"), "404 Not Found");
  EXPECT_EQ(excerpt("a\nb\tc"), "a b c");
  EXPECT_EQ(excerpt(""), "");
  EXPECT_EQ(excerpt(std::string("a\0b", 3)), "a?b");
}

TEST(ExcerptTest, LongBodiesAreCutTo512CharactersWithAMarker) {
  const std::string cut = excerpt(std::string(5000, 'x'));
  EXPECT_EQ(runes(cut), 512u);
  EXPECT_EQ(cut.substr(cut.size() - 3), "…");
  EXPECT_EQ(runes(excerpt(std::string(512, 'x'))), 512u);
  EXPECT_EQ(excerpt(std::string(512, 'x')).find("…"), std::string::npos);
}

TEST(ExcerptTest, MultibyteCharactersAreNeverSplit) {
  std::string body;
  for (int i = 0; i < 600; ++i) {
    body += "ü";
  }
  const std::string cut = excerpt(body, 10);
  EXPECT_EQ(cut, "üüüüüüüüü…");
}

}  // namespace
}  // namespace kvc
