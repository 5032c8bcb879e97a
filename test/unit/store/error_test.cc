#include "kvc/store/error.h"

#include <gtest/gtest.h>

#include <string>

namespace kvc::store {
namespace {

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

TEST(StoreErrorTest, ErrorsThatHealWithoutAWatchEventAreRetriedWithBackoff) {
  // A 500 PERSISTENT_FAIL (the policy directory becomes writable), TENANT_NOT_EMPTY (the
  // tenant's objects expire) and a route not served (the master is upgraded) change nothing a
  // controller watches, so they must not be terminal: Unavailable is retried with backoff.
  for (StoreErrorKind kind : {StoreErrorKind::PersistFailed, StoreErrorKind::TenantNotEmpty,
                              StoreErrorKind::RouteNotServed}) {
    EXPECT_EQ(StoreError(kind, "x").statusCode(), StatusCode::Unavailable)
        << storeErrorKindName(kind);
  }
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
  EXPECT_TRUE(
      StoreResult<int>(StoreError(StoreErrorKind::Transport, "x")).is(StoreErrorKind::Transport));
}

}  // namespace
}  // namespace kvc::store
