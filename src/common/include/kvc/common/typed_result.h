#pragma once
// A value, or a typed error that explains why there is none.
//
// kvc::Result carries a Status, which is enough for most code. The clients of external systems
// (the Kubernetes API, the Mooncake master) return richer errors that their callers branch on
// (NotFound vs Conflict, TenantNotFound vs RouteNotServed), so they use TypedResult with their
// own error type. It has the shape of kvc::Result (ok, status, value), so KVC_ASSIGN_OR_RETURN
// works with it in Status-returning code. `E` must offer `Status status() const`.

#include <utility>
#include <variant>

#include "kvc/common/status.h"

namespace kvc {

template <typename T, typename E>
class [[nodiscard]] TypedResult {
public:
  TypedResult(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  TypedResult(E error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  // Only on failure.
  const E& error() const { return std::get<1>(state_); }
  Status status() const { return ok() ? Status() : error().status(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

private:
  std::variant<T, E> state_;
};

}  // namespace kvc
