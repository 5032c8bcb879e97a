#include "kvc/common/text.h"

#include <gtest/gtest.h>

#include <string>

#include "kvc/common/json.h"

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

// Found by test/fuzz/fuzz_metrics, fuzz_segments, fuzz_ledger: an excerpt of a body that was
// not UTF-8 kept its stray bytes, and the condition it was put into could not be written.
TEST(ExcerptTest, BytesThatAreNotUtf8BecomeQuestionMarks) {
  EXPECT_EQ(excerpt("a\xff b\xc3"), "a? b?");
  EXPECT_EQ(excerpt("\xc3(x"), "?(x");          // a lead byte without its continuation
  EXPECT_EQ(excerpt("\xc0\xafx"), "??x");       // an overlong '/'
  EXPECT_EQ(excerpt("\xed\xa0\x80."), "???.");  // a surrogate
  EXPECT_EQ(excerpt("\xe2\x82\xac \xf0\x9f\x98\x80"), "\xe2\x82\xac \xf0\x9f\x98\x80");  // € 😀
  for (const char* body : {"\x8d\xc3(", "\xf4\x90\x80\x80", "x\xe2\x82"}) {
    EXPECT_NO_THROW((void)Json(excerpt(body)).dump()) << body;
  }
}

TEST(IsUtf8Test, WellFormedOnly) {
  EXPECT_TRUE(isUtf8(""));
  EXPECT_TRUE(isUtf8("plain ascii"));
  EXPECT_TRUE(isUtf8("\xc3\xbc \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"));
  EXPECT_FALSE(isUtf8("\xff"));
  EXPECT_FALSE(isUtf8("\xc3"));              // cut
  EXPECT_FALSE(isUtf8("\xc0\x80"));          // overlong NUL
  EXPECT_FALSE(isUtf8("\xe0\x80\x80"));      // overlong
  EXPECT_FALSE(isUtf8("\xed\xbf\xbf"));      // surrogate
  EXPECT_FALSE(isUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(isUtf8("\xf8\x88\x80\x80\x80"));
}

}  // namespace
}  // namespace kvc
