#pragma once
// GoogleMock matchers for kvc::Status, kvc::Result<T> and TypedResult<T, E> (after Envoy's
// test/test_common/status_utility.h and abseil's status_matchers):
//
//   EXPECT_THAT(result, IsOk());                       ok, whatever the value
//   EXPECT_THAT(result, StatusIs(StatusCode::Aborted)); the code of a Status or a result
//   EXPECT_THAT(result, StatusIs(StatusCode::NotFound, HasSubstr("team-a")));
//   EXPECT_THAT(result, HasValue(Eq(3)));              ok, and the value matches
//
// On a mismatch the message says the code and the message that came back.

#include <gmock/gmock.h>

#include <ostream>
#include <string>

#include "kvc/common/status.h"

namespace kvc {

// So that gtest prints a Status as "Code: message" in failures.
inline void PrintTo(const Status& status, std::ostream* out) {
  *out << (status.ok() ? std::string("OK") : status.toString());
}

}  // namespace kvc

namespace kvc::testing {

namespace internal {

inline const Status& statusOf(const Status& status) { return status; }
template <typename T>
Status statusOf(const T& result) {
  return result.status();
}

}  // namespace internal

MATCHER(IsOk, negation ? "is not ok" : "is ok") {
  const Status status = internal::statusOf(arg);
  if (!status.ok()) {
    *result_listener << "which is " << status.toString();
  }
  return status.ok();
}

MATCHER_P(StatusIs, code,
          std::string(negation ? "has a code other than " : "has code ") +
              std::string(statusCodeName(code))) {
  const Status status = internal::statusOf(arg);
  *result_listener << "which is " << (status.ok() ? std::string("OK") : status.toString());
  return status.code() == code;
}

MATCHER_P2(StatusIs, code, message_matcher,
           std::string(negation ? "has not code " : "has code ") +
               std::string(statusCodeName(code)) + " and a matching message") {
  const Status status = internal::statusOf(arg);
  *result_listener << "which is " << (status.ok() ? std::string("OK") : status.toString());
  return status.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, status.message(), result_listener);
}

MATCHER_P(HasValue, value_matcher, "is ok and its value matches") {
  if (!arg.ok()) {
    *result_listener << "which is " << internal::statusOf(arg).toString();
    return false;
  }
  return ::testing::ExplainMatchResult(value_matcher, *arg, result_listener);
}

}  // namespace kvc::testing
