#pragma once
// Typed failures of the Kubernetes client, read from the API's `Status` object.
//
// A controller must tell "not there" from "someone else wrote first" from "my watch is too old"
// from "slow down", and it must do so from the HTTP status and `Status.reason`, never from
// message text (as apimachinery's errors.ReasonForError does). Every failure of the kube layer
// is an ApiError carrying that reason, the HTTP status, the causes of an Invalid answer and a
// server's Retry-After; status() folds it into a kvc::Status whose code says what to do next:
//
//   reason                                  kvc::StatusCode      what the caller does
//   NotFound (404)                          NotFound             an answer, not a failure
//   AlreadyExists (409)                     AlreadyExists        an answer
//   Conflict (409)                          Aborted              re-read, then retry
//   Gone / Expired (410)                    Aborted              relist (watch) or re-read
//   Invalid (422), BadRequest (400), ...    InvalidArgument      wait for the input to change
//   Forbidden (403)                         PermissionDenied     fix RBAC
//   Unauthorized (401)                      Unauthenticated      fix credentials
//   TooManyRequests (429), 5xx, transport   Unavailable          retry with backoff
//   Timeout / ServerTimeout (504), deadline DeadlineExceeded     retry with backoff
//   an undecodable answer                   Internal             a bug somewhere

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kvc/api/status_cause.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/common/typed_result.h"

namespace kvc::kube {

enum class ErrorReason {
  // No answer from the server.
  Transport,  // connection refused or reset, TLS failure: nothing (complete) came back
  Deadline,   // the request's own deadline passed
  Cancelled,  // the caller asked the request to stop
  Decode,     // an answer came back but its body is not what the API promises
  Client,     // the request was refused before it was sent (bad parameters)
  // The API's StatusReason values.
  BadRequest,
  Unauthorized,
  Forbidden,
  NotFound,
  MethodNotAllowed,
  NotAcceptable,
  AlreadyExists,
  Conflict,
  Gone,     // 410 with reason Gone
  Expired,  // 410 with reason Expired ("too old resource version")
  RequestEntityTooLarge,
  UnsupportedMediaType,
  Invalid,
  TooManyRequests,
  InternalError,
  ServiceUnavailable,
  Timeout,        // 504 reason Timeout: the server could not finish in time
  ServerTimeout,  // reason ServerTimeout: retry
  Unknown,        // a status or reason this client does not know
};

// "NotFound", "Conflict", ... (the API's spelling for the API's reasons).
std::string_view errorReasonName(ErrorReason reason);

// One entry of Status.details.causes (field errors of an Invalid answer, SSA conflicts).
using StatusCause = api::StatusCause;

class ApiError {
public:
  ApiError(ErrorReason reason, std::string message, int http_status = 0)
      : reason_(reason), message_(std::move(message)), http_status_(http_status) {}

  ErrorReason reason() const { return reason_; }
  const std::string& message() const { return message_; }
  // 0 when no answer was received.
  int httpStatus() const { return http_status_; }
  const std::vector<StatusCause>& causes() const { return causes_; }
  // From the Retry-After header or Status.details.retryAfterSeconds (429, some 5xx, 410).
  std::optional<std::chrono::seconds> retryAfter() const { return retry_after_; }
  // Status.details.kind / name, when the server named the object.
  const std::string& detailsKind() const { return details_kind_; }
  const std::string& detailsName() const { return details_name_; }

  ApiError& withCauses(std::vector<StatusCause> causes) {
    causes_ = std::move(causes);
    return *this;
  }
  ApiError& withRetryAfter(std::optional<std::chrono::seconds> d) {
    retry_after_ = d;
    return *this;
  }
  ApiError& withDetails(std::string kind, std::string name) {
    details_kind_ = std::move(kind);
    details_name_ = std::move(name);
    return *this;
  }

  bool isNotFound() const { return reason_ == ErrorReason::NotFound; }
  bool isAlreadyExists() const { return reason_ == ErrorReason::AlreadyExists; }
  bool isConflict() const { return reason_ == ErrorReason::Conflict; }
  // A watch or list from a resourceVersion the server no longer has: relist.
  bool isGone() const { return reason_ == ErrorReason::Gone || reason_ == ErrorReason::Expired; }
  bool isInvalid() const { return reason_ == ErrorReason::Invalid; }
  bool isForbidden() const { return reason_ == ErrorReason::Forbidden; }
  bool isTooManyRequests() const { return reason_ == ErrorReason::TooManyRequests; }
  bool isTimeout() const {
    return reason_ == ErrorReason::Timeout || reason_ == ErrorReason::ServerTimeout ||
           reason_ == ErrorReason::Deadline;
  }
  // Worth retrying the same request later (after backoff or Retry-After).
  bool isRetryable() const;

  StatusCode statusCode() const;
  // "<Reason> (HTTP n): message[; field: cause; ...]"
  std::string describe() const;
  Status status() const { return {statusCode(), describe()}; }

private:
  ErrorReason reason_;
  std::string message_;
  int http_status_;
  std::vector<StatusCause> causes_;
  std::optional<std::chrono::seconds> retry_after_;
  std::string details_kind_;
  std::string details_name_;
};

// The reason of an answer, from Status.reason when it names one this client knows, else from
// the HTTP status (as client-go's newUnstructuredResponseError does).
ErrorReason reasonFor(int http_status, std::string_view status_reason);

// Reads an error from a non-2xx answer: the body is a Status object when the API server wrote
// it (then message, reason, causes and details come from it), or any text (a proxy's page).
// `retry_after_header` is the raw Retry-After header value, when present.
ApiError errorFromResponse(int http_status, std::string_view body,
                           std::string_view retry_after_header = {});

// Reads an error from a Status object (the object of a watch ERROR event).
ApiError errorFromStatus(const Json& status);

// A value or the ApiError explaining why there is none.
template <typename T>
using ApiResult = TypedResult<T, ApiError>;

// For calls that return nothing on success.
struct Done {};
using ApiStatus = ApiResult<Done>;

}  // namespace kvc::kube
