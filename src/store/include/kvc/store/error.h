#pragma once
// Typed failures of the Mooncake admin client.
//
// A reconcile loop has to tell "the master is not serving yet" from "multi-tenancy is off" from
// "this tenant still holds objects", and it must do so from the HTTP status and the master's
// numeric `error_code`, never from message text (reference/mooncake.md §3.1). Every failure of
// the store layer is therefore a StoreError carrying a kind, the HTTP status and the error code
// it was classified from, and a message for people. status() folds it into a kvc::Status so
// that callers which only need "retry or not" can use the usual macros.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "kvc/common/status.h"
#include "kvc/common/text.h"  // excerpt(), for the messages of StoreError
#include "kvc/common/typed_result.h"

namespace kvc::store {

enum class StoreErrorKind {
  // Transport.
  Transport,         // connection refused or reset, nothing answered: retry
  DeadlineExceeded,  // the request's own deadline passed: retry
  BodyTooLarge,      // the response body passed the size limit
  Fenced,            // a write not sent: this replica's leadership ended (fenced_transport.h)
  // Any route.
  ServicePlaneInactive,  // 503 on a gated route: an HA replica that is not serving (transient)
  RouteNotServed,        // 404 without a Mooncake error body: a master that lacks the route
  UnexpectedStatus,      // any other non-200 answer, or a refusal code this client does not know
  MalformedBody,         // a 200 whose body does not parse or breaks the documented rules
  ListingTooLarge,       // the segment listing is past the limits a status can carry
  // Tenant-ledger refusals, each one (HTTP status, error_code) pair.
  MultiTenancyDisabled,  // 409, -1011 UNAVAILABLE_IN_CURRENT_MODE
  InvalidParams,         // 400, -600 INVALID_PARAMS; also what this client refuses before sending
  TenantNotFound,        // 404, -704 OBJECT_NOT_FOUND: the only "absent" answer
  TenantNotEmpty,        // 409, -1702 TENANT_NOT_EMPTY: the policy was restored
  TransientState,        // 409, -1010 UNAVAILABLE_IN_CURRENT_STATUS: retry
  PersistFailed,         // 500, -1503 PERSISTENT_FAIL: not saved by the connector, not applied
};

// "TenantNotEmpty", ... (stable; used in logs and JSON output).
std::string_view storeErrorKindName(StoreErrorKind kind);

// Mooncake's error codes that the admin API answers with (mooncake-store/include/types.h).
inline constexpr std::int64_t kErrInvalidParams = -600;
inline constexpr std::int64_t kErrObjectNotFound = -704;
inline constexpr std::int64_t kErrUnavailableInCurrentStatus = -1010;
inline constexpr std::int64_t kErrUnavailableInCurrentMode = -1011;
inline constexpr std::int64_t kErrPersistentFail = -1503;
inline constexpr std::int64_t kErrTenantQuotaExceeded = -1700;
inline constexpr std::int64_t kErrTenantNotRegistered = -1701;
inline constexpr std::int64_t kErrTenantNotEmpty = -1702;

class StoreError {
public:
  StoreError(StoreErrorKind kind, std::string message, int http_status = 0,
             std::optional<std::int64_t> error_code = std::nullopt)
      : kind_(kind),
        message_(std::move(message)),
        http_status_(http_status),
        error_code_(error_code) {}

  StoreErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  // 0 when no HTTP answer was received (transport failures, client-side refusals).
  int httpStatus() const { return http_status_; }
  // The master's `error_code`, when its body carried one.
  std::optional<std::int64_t> errorCode() const { return error_code_; }

  // The canonical code says what to do next: Unavailable/DeadlineExceeded are retried with
  // backoff — including PersistFailed, TenantNotEmpty and RouteNotServed, which heal without
  // any watch event; FailedPrecondition (MultiTenancyDisabled) and InvalidArgument wait for a
  // change; NotFound is an answer.
  StatusCode statusCode() const;
  Status status() const { return {statusCode(), message_}; }

private:
  StoreErrorKind kind_;
  std::string message_;
  int http_status_;
  std::optional<std::int64_t> error_code_;
};

// A value or the StoreError explaining why there is none.
template <typename T>
class [[nodiscard]] StoreResult : public TypedResult<T, StoreError> {
public:
  using TypedResult<T, StoreError>::TypedResult;
  // True when this is a failure of the given kind.
  bool is(StoreErrorKind kind) const { return !this->ok() && this->error().kind() == kind; }
};

}  // namespace kvc::store
