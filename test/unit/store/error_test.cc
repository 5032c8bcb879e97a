#include "kvc/store/error.h"

#include <gtest/gtest.h>

#include <string>

namespace kvc::store {
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

TEST(StoreErrorTest, CodesSayWhatToDoNext) {
  EXPECT_EQ(StoreError(StoreErrorKind::Transport, "x").statusCode(), StatusCode::Unavailable);
  EXPECT_EQ(StoreError(StoreErrorKind::ServicePlaneInactive, "x").statusCode(),
            StatusCode::Unavailable);
  EXPECT_EQ(StoreError(StoreErrorKind::DeadlineExceeded, "x").statusCode(),
            StatusCode::DeadlineExceeded);
  EXPECT_EQ(StoreError(StoreErrorKind::TenantNotFound, "x").statusCode(), StatusCode::NotFound);
  EXPECT_EQ(StoreError(StoreErrorKind::MultiTenancyDisabled, "x").statusCode(),
            StatusCode::FailedPrecondition);
  EXPECT_EQ(StoreError(StoreErrorKind::InvalidParams, "x").statusCode(),
            StatusCode::InvalidArgument);
  EXPECT_EQ(StoreError(StoreErrorKind::MalformedBody, "x").statusCode(), StatusCode::Internal);
  EXPECT_EQ(storeErrorKindName(StoreErrorKind::PersistFailed), "PersistFailed");
}

TEST(StoreResultTest, WorksWithTheStatusMacros) {
  auto twice = [](StoreResult<int> in) -> Result<int> {
    KVC_ASSIGN_OR_RETURN(int value, std::move(in));
    return value * 2;
  };
  EXPECT_EQ(*twice(StoreResult<int>(21)), 42);
  const auto failed = twice(StoreError(StoreErrorKind::TenantNotFound, "gone"));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::NotFound);
  EXPECT_EQ(failed.status().message(), "gone");
  EXPECT_TRUE(StoreResult<int>(StoreError(StoreErrorKind::Transport, "x"))
                  .is(StoreErrorKind::Transport));
}

}  // namespace
}  // namespace kvc::store
