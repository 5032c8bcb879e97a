#include "kvc/api/condition.h"

#include <algorithm>

#include "kvc/api/decode.h"
#include "kvc/api/message.h"

namespace kvc::api {

Condition makeCondition(std::string_view type, std::string_view status, std::string_view reason,
                        std::string message) {
  Condition condition;
  condition.type = std::string(type);
  condition.status = std::string(status);
  condition.reason = std::string(reason);
  condition.message = std::move(message);
  return condition;
}

const Condition* findCondition(const std::vector<Condition>& conditions, std::string_view type) {
  for (const Condition& condition : conditions) {
    if (condition.type == type) {
      return &condition;
    }
  }
  return nullptr;
}

bool isConditionTrue(const std::vector<Condition>& conditions, std::string_view type) {
  const Condition* condition = findCondition(conditions, type);
  return condition != nullptr && condition->status == kConditionTrue;
}

bool setCondition(std::vector<Condition>& conditions, Condition desired, std::int64_t generation,
                  std::string_view now) {
  desired.message = boundMessage(desired.message);
  desired.observed_generation = generation;
  auto existing = std::find_if(conditions.begin(), conditions.end(),
                               [&](const Condition& c) { return c.type == desired.type; });
  if (existing == conditions.end()) {
    desired.last_transition_time = std::string(now);
    conditions.push_back(std::move(desired));
    return true;
  }
  desired.last_transition_time =
      existing->status == desired.status ? existing->last_transition_time : std::string(now);
  if (desired.last_transition_time.empty()) {
    desired.last_transition_time = std::string(now);  // a condition written without a time
  }
  if (*existing == desired) {
    return false;
  }
  *existing = std::move(desired);
  return true;
}

bool removeCondition(std::vector<Condition>& conditions, std::string_view type) {
  const auto before = conditions.size();
  std::erase_if(conditions, [&](const Condition& c) { return c.type == type; });
  return conditions.size() != before;
}

bool setConditions(std::vector<Condition>& conditions, const std::vector<Condition>& desired,
                   const std::vector<std::string_view>& owned_types, std::int64_t generation,
                   std::string_view now) {
  bool changed = false;
  for (std::string_view type : owned_types) {
    if (findCondition(desired, type) == nullptr) {
      changed = removeCondition(conditions, type) || changed;
    }
  }
  for (const Condition& condition : desired) {
    changed = setCondition(conditions, condition, generation, now) || changed;
  }
  return changed;
}

Json conditionToJson(const Condition& condition) {
  Json out = Json::object();
  out["type"] = condition.type;
  out["status"] = condition.status;
  if (condition.observed_generation > 0) {
    out["observedGeneration"] = condition.observed_generation;
  }
  if (!condition.last_transition_time.empty()) {
    out["lastTransitionTime"] = condition.last_transition_time;
  }
  if (!condition.reason.empty()) {
    out["reason"] = condition.reason;
  }
  out["message"] = condition.message;
  return out;
}

Json conditionsToJson(const std::vector<Condition>& conditions) {
  Json out = Json::array();
  for (const Condition& condition : conditions) {
    out.push_back(conditionToJson(condition));
  }
  return out;
}

Result<std::vector<Condition>> conditionsFromJson(const Json& conditions, std::string_view path) {
  return listFromJson<Condition>(
      conditions, path, [](const Json& item, const std::string& at) -> Result<Condition> {
        KVC_ASSIGN_OR_RETURN(auto type, optionalString(item, "type", at));
        KVC_ASSIGN_OR_RETURN(auto status, optionalString(item, "status", at));
        KVC_ASSIGN_OR_RETURN(auto reason, optionalString(item, "reason", at));
        KVC_ASSIGN_OR_RETURN(auto message, optionalString(item, "message", at));
        KVC_ASSIGN_OR_RETURN(auto transition, optionalString(item, "lastTransitionTime", at));
        KVC_ASSIGN_OR_RETURN(auto generation, optionalInt(item, "observedGeneration", at));
        if (!type || type->empty()) {
          return invalidArgument(at + ".type is required");
        }
        Condition condition;
        condition.type = *type;
        condition.status = status.value_or(std::string(kConditionUnknown));
        condition.reason = reason.value_or("");
        condition.message = message.value_or("");
        condition.last_transition_time = transition.value_or("");
        condition.observed_generation = generation.value_or(0);
        return condition;
      });
}

}  // namespace kvc::api
