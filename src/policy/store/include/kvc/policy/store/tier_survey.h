#pragma once
// What the `local-disk-survey` init container of a member with a disk tier reports (contract
// §3.7): `entries=<n> control=<m>` in its termination message — the entries already in the tier
// directory, and as a control the entries of the container's `/` (never 0 when counting works),
// -1 for a directory that could not be read. The controller reads it back for TierWasEmpty.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvc::policy {

struct TierSurvey {
  std::int64_t entries = -1;  // in the tier; -1 = unreadable
  std::int64_t control = -1;  // in `/`; -1 = unreadable

  friend bool operator==(const TierSurvey&, const TierSurvey&) = default;
};

std::string formatTierSurvey(const TierSurvey& survey);
// nullopt for a message that is not a survey (a crash's log tail, an empty message).
std::optional<TierSurvey> parseTierSurvey(std::string_view message);

}  // namespace kvc::policy
