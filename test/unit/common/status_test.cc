#include "kvc/common/status.h"

#include <gtest/gtest.h>

namespace kvc {
namespace {

Result<int> half(int value) {
  if (value % 2 != 0) {
    return invalidArgument(std::to_string(value) + " is odd");
  }
  return value / 2;
}

Result<int> quarter(int value) {
  KVC_ASSIGN_OR_RETURN(int h, half(value));
  KVC_ASSIGN_OR_RETURN(int q, half(h));
  return q;
}

TEST(Status, OkByDefault) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().toString(), "Ok");
}

TEST(Status, WithContextPrefixesTheMessageAndKeepsTheCode) {
  const Status status = notFound("no such binding").withContext("reading team-a/chat");
  EXPECT_EQ(status.code(), StatusCode::NotFound);
  EXPECT_EQ(status.message(), "reading team-a/chat: no such binding");
  EXPECT_EQ(status.toString(), "NotFound: reading team-a/chat: no such binding");
}

TEST(Result, AssignOrReturnPropagatesTheFirstError) {
  EXPECT_EQ(*quarter(8), 2);
  const Result<int> odd = quarter(6);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().message(), "3 is odd");
}

}  // namespace
}  // namespace kvc
