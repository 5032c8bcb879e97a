// Status -> typed error -> kvc::Status code: what the caller does next depends on it.
#include "kvc/kube/error.h"

#include <gtest/gtest.h>

#include <string>

namespace kvc::kube {
namespace {

std::string status(int code, const std::string& reason, const std::string& message,
                   const std::string& details = "") {
  std::string body = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                     R"("message":")" +
                     message + R"(","reason":")" + reason + R"(","code":)" + std::to_string(code);
  if (!details.empty()) {
    body += R"(,"details":)" + details;
  }
  return body + "}";
}

struct Case {
  int http;
  const char* reason;
  ErrorReason expected;
  StatusCode code;
};

TEST(ApiErrorTest, EveryReasonMapsToTheCodeThatSaysWhatToDoNext) {
  const Case cases[] = {
      {404, "NotFound", ErrorReason::NotFound, StatusCode::NotFound},
      {409, "AlreadyExists", ErrorReason::AlreadyExists, StatusCode::AlreadyExists},
      {409, "Conflict", ErrorReason::Conflict, StatusCode::Aborted},
      {410, "Gone", ErrorReason::Gone, StatusCode::Aborted},
      {410, "Expired", ErrorReason::Expired, StatusCode::Aborted},
      {422, "Invalid", ErrorReason::Invalid, StatusCode::InvalidArgument},
      {400, "BadRequest", ErrorReason::BadRequest, StatusCode::InvalidArgument},
      {403, "Forbidden", ErrorReason::Forbidden, StatusCode::PermissionDenied},
      {401, "Unauthorized", ErrorReason::Unauthorized, StatusCode::Unauthenticated},
      {429, "TooManyRequests", ErrorReason::TooManyRequests, StatusCode::Unavailable},
      {500, "InternalError", ErrorReason::InternalError, StatusCode::Unavailable},
      {503, "ServiceUnavailable", ErrorReason::ServiceUnavailable, StatusCode::Unavailable},
      {504, "Timeout", ErrorReason::Timeout, StatusCode::DeadlineExceeded},
      {500, "ServerTimeout", ErrorReason::ServerTimeout, StatusCode::DeadlineExceeded},
      {405, "MethodNotAllowed", ErrorReason::MethodNotAllowed, StatusCode::InvalidArgument},
      {415, "UnsupportedMediaType", ErrorReason::UnsupportedMediaType, StatusCode::InvalidArgument},
      {413, "RequestEntityTooLarge", ErrorReason::RequestEntityTooLarge,
       StatusCode::InvalidArgument},
  };
  for (const Case& c : cases) {
    const ApiError e = errorFromResponse(c.http, status(c.http, c.reason, "m"));
    EXPECT_EQ(e.reason(), c.expected) << c.reason;
    EXPECT_EQ(e.statusCode(), c.code) << c.reason;
    EXPECT_EQ(e.httpStatus(), c.http) << c.reason;
    EXPECT_EQ(e.status().code(), c.code) << c.reason;
  }
}

TEST(ApiErrorTest, WithoutAKnownReasonTheHttpStatusDecides) {
  EXPECT_EQ(errorFromResponse(404, "404 page not found").reason(), ErrorReason::NotFound);
  EXPECT_EQ(errorFromResponse(409, status(409, "", "x")).reason(), ErrorReason::Conflict);
  EXPECT_EQ(errorFromResponse(502, "<html>bad gateway</html>").reason(),
            ErrorReason::InternalError);
  EXPECT_EQ(errorFromResponse(502, "").statusCode(), StatusCode::Unavailable);
  EXPECT_EQ(errorFromResponse(418, "teapot").statusCode(), StatusCode::Unknown);
  EXPECT_EQ(errorFromResponse(504, "").reason(), ErrorReason::Timeout);
}

TEST(ApiErrorTest, ANonStatusBodyIsQuotedOnOneLineWithoutSplittingACharacter) {
  std::string page = "<html>\n";
  for (int i = 0; i < 400; ++i) {
    page += "ü";  // two bytes each: a byte cut at 300 would split one
  }
  const ApiError e = errorFromResponse(502, page);
  EXPECT_EQ(e.message().find('\n'), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("…"), std::string::npos) << e.message();
  // Valid UTF-8: it can go into a condition or an Event without the JSON encoder throwing.
  EXPECT_NO_THROW((void)Json(e.message()).dump());
}

TEST(ApiErrorTest, InvalidCarriesItsFieldCauses) {
  const ApiError e = errorFromResponse(
      422, status(422, "Invalid", "KVCachePoolBinding.worker.gpustack.ai b is invalid",
                  R"({"name":"b","group":"worker.gpustack.ai","kind":"KVCachePoolBinding",
                      "causes":[{"reason":"FieldValueRequired","message":"Required value",
                      "field":"spec.poolRef"},{"reason":"FieldValueInvalid",
                      "message":"must be positive","field":"spec.domain.blockSize"}]})"));
  ASSERT_TRUE(e.isInvalid());
  ASSERT_EQ(e.causes().size(), 2U);
  EXPECT_EQ(e.causes()[0], (StatusCause{"FieldValueRequired", "Required value", "spec.poolRef"}));
  EXPECT_EQ(e.causes()[1].field, "spec.domain.blockSize");
  EXPECT_EQ(e.detailsKind(), "KVCachePoolBinding");
  EXPECT_EQ(e.detailsName(), "b");
}

TEST(ApiErrorTest, ApplyConflictsListTheOwningManagers) {
  const ApiError e = errorFromResponse(409, status(409, "Conflict", "Apply failed with 1 conflict",
                                                   R"({"causes":[{"reason":"FieldManagerConflict",
                      "message":"conflict with \"other\"","field":".spec.quota.ceiling"}]})"));
  EXPECT_TRUE(e.isConflict());
  EXPECT_EQ(e.statusCode(), StatusCode::Aborted);
  ASSERT_EQ(e.causes().size(), 1U);
  EXPECT_EQ(e.causes()[0].reason, "FieldManagerConflict");
  EXPECT_NE(e.describe().find(".spec.quota.ceiling: conflict with \"other\""), std::string::npos)
      << e.describe();
}

TEST(ApiErrorTest, RetryAfterComesFromTheHeaderOrTheDetails) {
  const ApiError header = errorFromResponse(429, status(429, "TooManyRequests", "slow down"), "7");
  ASSERT_TRUE(header.retryAfter().has_value());
  EXPECT_EQ(header.retryAfter()->count(), 7);
  EXPECT_TRUE(header.isTooManyRequests());
  EXPECT_TRUE(header.isRetryable());
  const ApiError details = errorFromResponse(
      429, status(429, "TooManyRequests", "slow down", R"({"retryAfterSeconds":3})"));
  ASSERT_TRUE(details.retryAfter().has_value());
  EXPECT_EQ(details.retryAfter()->count(), 3);
  EXPECT_FALSE(errorFromResponse(429, "", "Wed, 21 Oct 2015 07:28:00 GMT").retryAfter());
}

TEST(ApiErrorTest, GoneIsRecognisedInAWatchErrorEvent) {
  const Json event_object = Json::parse(status(410, "Expired", "too old resource version: 5 (9)"));
  const ApiError e = errorFromStatus(event_object);
  EXPECT_TRUE(e.isGone());
  EXPECT_EQ(e.httpStatus(), 410);
  EXPECT_EQ(e.message(), "too old resource version: 5 (9)");
}

TEST(ApiErrorTest, TransportFailuresAreRetryableAndNamed) {
  const ApiError refused(ErrorReason::Transport, "connection refused");
  EXPECT_TRUE(refused.isRetryable());
  EXPECT_EQ(refused.statusCode(), StatusCode::Unavailable);
  EXPECT_EQ(refused.describe(), "Transport: connection refused");
  const ApiError deadline(ErrorReason::Deadline, "timed out");
  EXPECT_TRUE(deadline.isTimeout());
  EXPECT_EQ(deadline.statusCode(), StatusCode::DeadlineExceeded);
  EXPECT_FALSE(ApiError(ErrorReason::Forbidden, "no").isRetryable());
  EXPECT_EQ(errorReasonName(ErrorReason::Expired), "Expired");
}

TEST(ApiErrorTest, ApiResultWorksWithTheStatusMacros) {
  auto fails = []() -> ApiResult<int> { return ApiError(ErrorReason::NotFound, "gone", 404); };
  auto use = [&]() -> Status {
    KVC_ASSIGN_OR_RETURN(int v, fails());
    static_cast<void>(v);
    return okStatus();
  };
  EXPECT_EQ(use().code(), StatusCode::NotFound);
  ApiResult<int> good = 3;
  EXPECT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  EXPECT_TRUE(good.status().ok());
}

}  // namespace
}  // namespace kvc::kube
