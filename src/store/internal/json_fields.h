#pragma once
// Private helpers of the store layer: reading typed fields out of master JSON bodies, with
// MalformedBody errors that name the route and the field.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kvc/common/json.h"
#include "kvc/store/error.h"

namespace kvc::store::internal {

// Parses `body` as JSON (no exceptions). MalformedBody "<what>: not JSON: <excerpt>".
StoreResult<Json> parseJsonBody(std::string_view body, std::string_view what);

// `obj[key]` as a non-negative integer < 2^63. `present` is false when the key is absent or null
// (then the result is 0 and no error). Any other type, a fraction, a negative value or one past
// 2^63-1 is an error.
StoreResult<std::int64_t> readCount(const Json& obj, std::string_view key, std::string_view what,
                                    bool* present);
// The same, but the key is required.
StoreResult<std::int64_t> requireCount(const Json& obj, std::string_view key,
                                       std::string_view what);
// Optional integer field.
StoreResult<std::optional<std::int64_t>> optionalCount(const Json& obj, std::string_view key,
                                                       std::string_view what);
// A string field; absent or null gives "" (or an error when `required`).
StoreResult<std::string> readString(const Json& obj, std::string_view key, std::string_view what,
                                    bool required);
// A boolean field; absent or null is an error when `required`, else nullopt.
StoreResult<std::optional<bool>> readBool(const Json& obj, std::string_view key,
                                          std::string_view what, bool required);

StoreError malformed(std::string_view what, std::string_view detail);

}  // namespace kvc::store::internal
