#include "kvc/policy/tier_survey.h"

#include <charconv>

namespace kvc::policy {
namespace {

// `<key>=<integer>` at the front of `text`, consumed.
std::optional<std::int64_t> take(std::string_view& text, std::string_view key) {
  if (text.substr(0, key.size() + 1) != std::string(key) + "=") {
    return std::nullopt;
  }
  text.remove_prefix(key.size() + 1);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data() || value < -1) {
    return std::nullopt;
  }
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return value;
}

}  // namespace

std::string formatTierSurvey(const TierSurvey& survey) {
  return "entries=" + std::to_string(survey.entries) + " control=" + std::to_string(survey.control);
}

std::optional<TierSurvey> parseTierSurvey(std::string_view message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
    message.remove_suffix(1);
  }
  TierSurvey out;
  auto entries = take(message, "entries");
  if (!entries || message.empty() || message.front() != ' ') {
    return std::nullopt;
  }
  message.remove_prefix(1);
  auto control = take(message, "control");
  if (!control || !message.empty()) {
    return std::nullopt;
  }
  out.entries = *entries;
  out.control = *control;
  return out;
}

}  // namespace kvc::policy
