#pragma once
// Errors as values (after absl::Status / absl::StatusOr).
//
// Every fallible function in kvcache-operator returns a Status or a Result<T>. The code tells the
// caller what to do next, which is how a reconcile loop maps an error onto a requeue policy:
//   Unavailable, DeadlineExceeded, ResourceExhausted  -> retry the same call (with backoff)
//   Aborted (a conflict)                               -> re-read and retry the transaction
//   FailedPrecondition, InvalidArgument                -> do not retry until the input changes
//   NotFound, AlreadyExists, PermissionDenied          -> the caller decides; never retried blindly
//   Internal, Unknown                                  -> a bug or an unexpected answer

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace kvc {

enum class StatusCode {
  Ok,
  InvalidArgument,
  NotFound,
  AlreadyExists,
  FailedPrecondition,
  Aborted,
  Unavailable,
  DeadlineExceeded,
  ResourceExhausted,
  PermissionDenied,
  Unauthenticated,
  Internal,
  Unknown,
};

std::string_view statusCodeName(StatusCode code);

class [[nodiscard]] Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::Ok; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "NotFound: message" — for logs; user-facing text should use message() directly.
  std::string toString() const;

  // Returns a copy whose message is "<context>: <message>".
  Status withContext(std::string_view context) const;

  friend bool operator==(const Status&, const Status&) = default;

private:
  StatusCode code_ = StatusCode::Ok;
  std::string message_;
};

inline Status okStatus() { return {}; }
inline Status invalidArgument(std::string m) { return {StatusCode::InvalidArgument, std::move(m)}; }
inline Status notFound(std::string m) { return {StatusCode::NotFound, std::move(m)}; }
inline Status alreadyExists(std::string m) { return {StatusCode::AlreadyExists, std::move(m)}; }
inline Status failedPrecondition(std::string m) {
  return {StatusCode::FailedPrecondition, std::move(m)};
}
inline Status aborted(std::string m) { return {StatusCode::Aborted, std::move(m)}; }
inline Status unavailable(std::string m) { return {StatusCode::Unavailable, std::move(m)}; }
inline Status deadlineExceeded(std::string m) {
  return {StatusCode::DeadlineExceeded, std::move(m)};
}
inline Status resourceExhausted(std::string m) {
  return {StatusCode::ResourceExhausted, std::move(m)};
}
inline Status permissionDenied(std::string m) {
  return {StatusCode::PermissionDenied, std::move(m)};
}
inline Status internalError(std::string m) { return {StatusCode::Internal, std::move(m)}; }

// A value or the Status explaining why there is none (absl::StatusOr<T>).
template <typename T>
class [[nodiscard]] Result {
public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!status_.ok() && "a Result built from a Status must carry an error");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }

  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T&& operator*() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace kvc

#define KVC_CONCAT_INNER_(a, b) a##b
#define KVC_CONCAT_(a, b) KVC_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function when `expr` is not ok.
#define KVC_RETURN_IF_ERROR(expr)       \
  do {                                  \
    ::kvc::Status kvc_status_ = (expr); \
    if (!kvc_status_.ok()) {            \
      return kvc_status_;               \
    }                                   \
  } while (false)

// `KVC_ASSIGN_OR_RETURN(auto x, f());` declares x from a Result, or returns its Status.
#define KVC_ASSIGN_OR_RETURN(lhs, expr) \
  KVC_ASSIGN_OR_RETURN_IMPL_(KVC_CONCAT_(kvc_result_, __LINE__), lhs, expr)
#define KVC_ASSIGN_OR_RETURN_IMPL_(result, lhs, expr) \
  auto result = (expr);                               \
  if (!result.ok()) {                                 \
    return result.status();                           \
  }                                                   \
  lhs = std::move(result).value()
