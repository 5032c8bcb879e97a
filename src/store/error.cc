#include "kvc/store/error.h"

namespace kvc::store {

std::string_view storeErrorKindName(StoreErrorKind kind) {
  switch (kind) {
    case StoreErrorKind::Transport:
      return "Transport";
    case StoreErrorKind::DeadlineExceeded:
      return "DeadlineExceeded";
    case StoreErrorKind::BodyTooLarge:
      return "BodyTooLarge";
    case StoreErrorKind::Fenced:
      return "Fenced";
    case StoreErrorKind::ServicePlaneInactive:
      return "ServicePlaneInactive";
    case StoreErrorKind::RouteNotServed:
      return "RouteNotServed";
    case StoreErrorKind::UnexpectedStatus:
      return "UnexpectedStatus";
    case StoreErrorKind::MalformedBody:
      return "MalformedBody";
    case StoreErrorKind::ListingTooLarge:
      return "ListingTooLarge";
    case StoreErrorKind::MultiTenancyDisabled:
      return "MultiTenancyDisabled";
    case StoreErrorKind::InvalidParams:
      return "InvalidParams";
    case StoreErrorKind::TenantNotFound:
      return "TenantNotFound";
    case StoreErrorKind::TenantNotEmpty:
      return "TenantNotEmpty";
    case StoreErrorKind::TransientState:
      return "TransientState";
    case StoreErrorKind::PersistFailed:
      return "PersistFailed";
  }
  return "Unknown";
}

StatusCode StoreError::statusCode() const {
  switch (kind_) {
    case StoreErrorKind::Transport:
    case StoreErrorKind::ServicePlaneInactive:
    case StoreErrorKind::TransientState:
    // These heal without any watch event — the connector's directory becomes writable, the
    // tenant's objects expire, the master is upgraded to one that serves the route — so a
    // controller retries them with backoff instead of waiting for a change that never comes.
    case StoreErrorKind::PersistFailed:
    case StoreErrorKind::TenantNotEmpty:
    case StoreErrorKind::RouteNotServed:
      return StatusCode::Unavailable;
    case StoreErrorKind::DeadlineExceeded:
      return StatusCode::DeadlineExceeded;
    case StoreErrorKind::BodyTooLarge:
    case StoreErrorKind::ListingTooLarge:
      return StatusCode::ResourceExhausted;
    case StoreErrorKind::MultiTenancyDisabled:
      return StatusCode::FailedPrecondition;
    case StoreErrorKind::Fenced:
      return StatusCode::Aborted;  // the replica stops reconciling; its successor writes
    case StoreErrorKind::InvalidParams:
      return StatusCode::InvalidArgument;
    case StoreErrorKind::TenantNotFound:
      return StatusCode::NotFound;
    case StoreErrorKind::UnexpectedStatus:
    case StoreErrorKind::MalformedBody:
      return StatusCode::Internal;
  }
  return StatusCode::Unknown;
}

}  // namespace kvc::store
