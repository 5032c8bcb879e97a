// Logging: --log-format json writes one valid JSON object per line, whatever the message holds.
#include "kvc/common/log.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "kvc/common/json.h"

namespace kvc {
namespace {

TEST(LogTest, EscapeJsonStringEscapesWhatJsonRequires) {
  EXPECT_EQ(escapeJsonString(R"(say "hi" \ there)"), R"(say \"hi\" \\ there)");
  EXPECT_EQ(escapeJsonString("a\nb\tc\rd"), R"(a\nb\tc\rd)");
  EXPECT_EQ(escapeJsonString(std::string("\x01", 1)), R"(\u0001)");
  EXPECT_EQ(escapeJsonString("Grüße"), "Grüße");  // UTF-8 passes through
}

TEST(LogTest, JsonLinesStayValidJsonWithQuotesAndNewlinesInTheMessage) {
  ASSERT_TRUE(initLogging("info", LogFormat::JsonLines).ok());
  ::testing::internal::CaptureStderr();
  spdlog::info("pool \"shared-dram\": {}", "line one\nline \\ two");
  spdlog::default_logger()->flush();
  const std::string out = ::testing::internal::GetCapturedStderr();
  spdlog::drop_all();
  std::istringstream lines(out);
  std::string line;
  int parsed = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) {
      continue;
    }
    const Json entry = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(entry.is_discarded()) << line;
    EXPECT_EQ(entry["level"], "info");
    EXPECT_EQ(entry["msg"], "pool \"shared-dram\": line one\nline \\ two");
    ++parsed;
  }
  EXPECT_EQ(parsed, 1);
}

}  // namespace
}  // namespace kvc
