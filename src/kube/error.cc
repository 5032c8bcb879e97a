#include "kvc/kube/error.h"

#include <array>
#include <cctype>
#include <charconv>

#include "kvc/common/text.h"

namespace kvc::kube {
namespace {

struct ReasonName {
  ErrorReason reason;
  std::string_view name;
};

constexpr std::array<ReasonName, 24> kReasonNames = {{
    {ErrorReason::Transport, "Transport"},
    {ErrorReason::Deadline, "Deadline"},
    {ErrorReason::Cancelled, "Cancelled"},
    {ErrorReason::Decode, "Decode"},
    {ErrorReason::Client, "Client"},
    {ErrorReason::BadRequest, "BadRequest"},
    {ErrorReason::Unauthorized, "Unauthorized"},
    {ErrorReason::Forbidden, "Forbidden"},
    {ErrorReason::NotFound, "NotFound"},
    {ErrorReason::MethodNotAllowed, "MethodNotAllowed"},
    {ErrorReason::NotAcceptable, "NotAcceptable"},
    {ErrorReason::AlreadyExists, "AlreadyExists"},
    {ErrorReason::Conflict, "Conflict"},
    {ErrorReason::Gone, "Gone"},
    {ErrorReason::Expired, "Expired"},
    {ErrorReason::RequestEntityTooLarge, "RequestEntityTooLarge"},
    {ErrorReason::UnsupportedMediaType, "UnsupportedMediaType"},
    {ErrorReason::Invalid, "Invalid"},
    {ErrorReason::TooManyRequests, "TooManyRequests"},
    {ErrorReason::InternalError, "InternalError"},
    {ErrorReason::ServiceUnavailable, "ServiceUnavailable"},
    {ErrorReason::Timeout, "Timeout"},
    {ErrorReason::ServerTimeout, "ServerTimeout"},
    {ErrorReason::Unknown, "Unknown"},
}};

// The StatusReason values the API defines whose meaning this client knows. "Unknown" and the
// transport-only reasons are not read from a server.
std::optional<ErrorReason> parseApiReason(std::string_view name) {
  for (const ReasonName& entry : kReasonNames) {
    switch (entry.reason) {
      case ErrorReason::Transport:
      case ErrorReason::Deadline:
      case ErrorReason::Cancelled:
      case ErrorReason::Decode:
      case ErrorReason::Client:
      case ErrorReason::Unknown:
        continue;
      default:
        break;
    }
    if (entry.name == name) {
      return entry.reason;
    }
  }
  return std::nullopt;
}

ErrorReason reasonForCode(int code) {
  switch (code) {
    case 400:
      return ErrorReason::BadRequest;
    case 401:
      return ErrorReason::Unauthorized;
    case 403:
      return ErrorReason::Forbidden;
    case 404:
      return ErrorReason::NotFound;
    case 405:
      return ErrorReason::MethodNotAllowed;
    case 406:
      return ErrorReason::NotAcceptable;
    case 409:
      return ErrorReason::Conflict;
    case 410:
      return ErrorReason::Gone;
    case 413:
      return ErrorReason::RequestEntityTooLarge;
    case 415:
      return ErrorReason::UnsupportedMediaType;
    case 422:
      return ErrorReason::Invalid;
    case 429:
      return ErrorReason::TooManyRequests;
    case 500:
      return ErrorReason::InternalError;
    case 503:
      return ErrorReason::ServiceUnavailable;
    case 504:
      return ErrorReason::Timeout;
    default:
      break;
  }
  if (code >= 500) {
    return ErrorReason::InternalError;
  }
  return ErrorReason::Unknown;
}

// Retry-After is delta-seconds here (the API server never sends an HTTP date).
std::optional<std::chrono::seconds> parseRetryAfter(std::string_view header) {
  while (!header.empty() && std::isspace(static_cast<unsigned char>(header.front()))) {
    header.remove_prefix(1);
  }
  while (!header.empty() && std::isspace(static_cast<unsigned char>(header.back()))) {
    header.remove_suffix(1);
  }
  long long seconds = 0;
  const auto [end, ec] = std::from_chars(header.data(), header.data() + header.size(), seconds);
  if (ec != std::errc() || end != header.data() + header.size() || seconds < 0) {
    return std::nullopt;
  }
  return std::chrono::seconds(seconds);
}

std::string stringField(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it != object.end() && it->is_string()) {
    return it->get<std::string>();
  }
  return {};
}

}  // namespace

std::string_view errorReasonName(ErrorReason reason) {
  for (const ReasonName& entry : kReasonNames) {
    if (entry.reason == reason) {
      return entry.name;
    }
  }
  return "Unknown";
}

ErrorReason reasonFor(int http_status, std::string_view status_reason) {
  if (auto known = parseApiReason(status_reason)) {
    return *known;
  }
  return reasonForCode(http_status);
}

bool ApiError::isRetryable() const {
  switch (reason_) {
    case ErrorReason::Transport:
    case ErrorReason::Deadline:
    case ErrorReason::TooManyRequests:
    case ErrorReason::InternalError:
    case ErrorReason::ServiceUnavailable:
    case ErrorReason::Timeout:
    case ErrorReason::ServerTimeout:
      return true;
    default:
      return false;
  }
}

StatusCode ApiError::statusCode() const {
  switch (reason_) {
    case ErrorReason::NotFound:
      return StatusCode::NotFound;
    case ErrorReason::AlreadyExists:
      return StatusCode::AlreadyExists;
    case ErrorReason::Conflict:
    case ErrorReason::Gone:
    case ErrorReason::Expired:
      return StatusCode::Aborted;
    case ErrorReason::BadRequest:
    case ErrorReason::Invalid:
    case ErrorReason::MethodNotAllowed:
    case ErrorReason::NotAcceptable:
    case ErrorReason::RequestEntityTooLarge:
    case ErrorReason::UnsupportedMediaType:
    case ErrorReason::Client:
      return StatusCode::InvalidArgument;
    case ErrorReason::Forbidden:
      return StatusCode::PermissionDenied;
    case ErrorReason::Unauthorized:
      return StatusCode::Unauthenticated;
    case ErrorReason::Transport:
    case ErrorReason::TooManyRequests:
    case ErrorReason::InternalError:
    case ErrorReason::ServiceUnavailable:
      return StatusCode::Unavailable;
    case ErrorReason::Deadline:
    case ErrorReason::Timeout:
    case ErrorReason::ServerTimeout:
      return StatusCode::DeadlineExceeded;
    case ErrorReason::Cancelled:
      return StatusCode::Aborted;
    case ErrorReason::Decode:
      return StatusCode::Internal;
    case ErrorReason::Unknown:
      break;
  }
  return http_status_ >= 500 ? StatusCode::Unavailable : StatusCode::Unknown;
}

std::string ApiError::describe() const {
  std::string out(errorReasonName(reason_));
  if (http_status_ != 0) {
    out += " (HTTP " + std::to_string(http_status_) + ")";
  }
  out += ": " + message_;
  // The message of an Invalid answer already lists its causes; others may not.
  if (reason_ != ErrorReason::Invalid && !causes_.empty()) {
    out += " [";
    for (std::size_t i = 0; i < causes_.size(); ++i) {
      if (i > 0) {
        out += "; ";
      }
      if (!causes_[i].field.empty()) {
        out += causes_[i].field + ": ";
      }
      out += causes_[i].message;
    }
    out += "]";
  }
  if (retry_after_) {
    out += " (retry after " + std::to_string(retry_after_->count()) + "s)";
  }
  return out;
}

ApiError errorFromStatus(const Json& status) {
  if (!status.is_object()) {
    return ApiError(ErrorReason::Decode, "the error is not a Status object");
  }
  int code = 0;
  if (auto it = status.find("code"); it != status.end() && it->is_number_integer()) {
    code = it->get<int>();
  }
  const std::string reason_text = stringField(status, "reason");
  std::string message = stringField(status, "message");
  if (message.empty()) {
    message = reason_text.empty() ? "the server gave no message" : reason_text;
  }
  ApiError error(reasonFor(code, reason_text), std::move(message), code);
  if (auto details = status.find("details"); details != status.end() && details->is_object()) {
    error.withDetails(stringField(*details, "kind"), stringField(*details, "name"));
    if (auto causes = details->find("causes"); causes != details->end() && causes->is_array()) {
      std::vector<StatusCause> list;
      for (const Json& c : *causes) {
        if (c.is_object()) {
          list.push_back(
              {stringField(c, "reason"), stringField(c, "message"), stringField(c, "field")});
        }
      }
      error.withCauses(std::move(list));
    }
    if (auto retry = details->find("retryAfterSeconds");
        retry != details->end() && retry->is_number_integer() && retry->get<long long>() > 0) {
      error.withRetryAfter(std::chrono::seconds(retry->get<long long>()));
    }
  }
  return error;
}

ApiError errorFromResponse(int http_status, std::string_view body,
                           std::string_view retry_after_header) {
  const Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  std::optional<ApiError> error;
  if (parsed.is_object() && stringField(parsed, "kind") == "Status") {
    error = errorFromStatus(parsed);
    // The HTTP status is authoritative when the Status carries no code.
    if (error->httpStatus() == 0) {
      ApiError fixed(reasonFor(http_status, stringField(parsed, "reason")), error->message(),
                     http_status);
      fixed.withCauses(error->causes())
          .withRetryAfter(error->retryAfter())
          .withDetails(error->detailsKind(), error->detailsName());
      error = std::move(fixed);
    }
  } else {
    std::string message = body.empty() ? "the server answered with an empty body"
                                       : "the server answered: " + excerpt(body, 300);
    error = ApiError(reasonForCode(http_status), std::move(message), http_status);
  }
  if (auto header = parseRetryAfter(retry_after_header)) {
    error->withRetryAfter(header);
  }
  return std::move(*error);
}

}  // namespace kvc::kube
