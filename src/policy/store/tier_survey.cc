#include "kvc/policy/store/tier_survey.h"

#include "kvc/policy/base/count_pair.h"

namespace kvc::policy {

std::string formatTierSurvey(const TierSurvey& survey) {
  return formatCountPair("entries", survey.entries, "control", survey.control);
}

std::optional<TierSurvey> parseTierSurvey(std::string_view message) {
  auto counts = parseCountPair(message, "entries", "control");
  if (!counts) {
    return std::nullopt;
  }
  return TierSurvey{counts->first, counts->second};
}

}  // namespace kvc::policy
