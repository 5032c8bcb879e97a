#include "kvc/common/status.h"

namespace kvc {

std::string_view statusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::Ok:
      return "Ok";
    case StatusCode::InvalidArgument:
      return "InvalidArgument";
    case StatusCode::NotFound:
      return "NotFound";
    case StatusCode::AlreadyExists:
      return "AlreadyExists";
    case StatusCode::FailedPrecondition:
      return "FailedPrecondition";
    case StatusCode::Aborted:
      return "Aborted";
    case StatusCode::Unavailable:
      return "Unavailable";
    case StatusCode::DeadlineExceeded:
      return "DeadlineExceeded";
    case StatusCode::ResourceExhausted:
      return "ResourceExhausted";
    case StatusCode::PermissionDenied:
      return "PermissionDenied";
    case StatusCode::Unauthenticated:
      return "Unauthenticated";
    case StatusCode::Internal:
      return "Internal";
    case StatusCode::Unknown:
      return "Unknown";
  }
  return "Unknown";
}

std::string Status::toString() const {
  if (ok()) {
    return "Ok";
  }
  std::string out(statusCodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

Status Status::withContext(std::string_view context) const {
  if (ok()) {
    return *this;
  }
  std::string message(context);
  message += ": ";
  message += message_;
  return {code_, std::move(message)};
}

}  // namespace kvc
