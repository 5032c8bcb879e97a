#pragma once
// Status conditions (metav1.Condition), set the way controller-runtime's meta.SetStatusCondition
// sets them, with the message bounds of contract §1 applied in one place.
//
//   setCondition(conditions, desired, generation, now)
//     - a condition of that type is added, or the existing one updated in place (position kept);
//     - lastTransitionTime is `now` when the condition is new or its status flips, and kept
//       otherwise (a new reason or message is not a transition);
//     - observedGeneration is stamped with `generation`, the metadata.generation the controller
//       evaluated, so `kubectl wait --for=condition=…` never trusts a verdict on an older spec;
//     - the message is bounded to kMaxMessageBytes (message.h).
//   Returns whether anything changed, so a pass over an unchanged world can write nothing.
//
// Conditions are keyed by `type` (the CRDs declare the list a map keyed by type).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc::api {

inline constexpr std::string_view kConditionTrue = "True";
inline constexpr std::string_view kConditionFalse = "False";
inline constexpr std::string_view kConditionUnknown = "Unknown";

struct Condition {
  std::string type;
  std::string status;  // kConditionTrue | kConditionFalse | kConditionUnknown
  std::string reason;  // CamelCase, one word
  std::string message;
  std::string last_transition_time;  // RFC 3339, seconds
  std::int64_t observed_generation = 0;

  friend bool operator==(const Condition&, const Condition&) = default;
};

// A condition to set: type, status, reason and message (times and generations are stamped by
// setCondition).
Condition makeCondition(std::string_view type, std::string_view status, std::string_view reason,
                        std::string message);

// The condition of that type, or nullptr when the object does not report it.
const Condition* findCondition(const std::vector<Condition>& conditions, std::string_view type);
// True when the condition is present with status True.
bool isConditionTrue(const std::vector<Condition>& conditions, std::string_view type);

// See the header comment. `now` is an RFC 3339 time (kube::formatTime of the clock's wall time).
bool setCondition(std::vector<Condition>& conditions, Condition desired, std::int64_t generation,
                  std::string_view now);
// Removes the condition of that type; true when there was one.
bool removeCondition(std::vector<Condition>& conditions, std::string_view type);

// Every desired condition set in turn, and every condition of a type in `owned_types` that
// `desired` does not carry removed (a condition that no longer applies is dropped, not left
// stale). Conditions of other types (another controller's) are kept as they are.
bool setConditions(std::vector<Condition>& conditions, const std::vector<Condition>& desired,
                   const std::vector<std::string_view>& owned_types, std::int64_t generation,
                   std::string_view now);

Json conditionToJson(const Condition& condition);
Json conditionsToJson(const std::vector<Condition>& conditions);
// `path` prefixes field names in errors ("status.conditions[2].type").
Result<std::vector<Condition>> conditionsFromJson(const Json& conditions, std::string_view path);

}  // namespace kvc::api
