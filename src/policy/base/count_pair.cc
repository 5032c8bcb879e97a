#include "kvc/policy/base/count_pair.h"

#include <charconv>

namespace kvc::policy {
namespace {

// `<key>=<integer>` at the front of `text`, consumed.
std::optional<std::int64_t> take(std::string_view& text, std::string_view key) {
  if (text.substr(0, key.size()) != key || text.substr(key.size(), 1) != "=") {
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

std::string formatCountPair(std::string_view first, std::int64_t a, std::string_view second,
                            std::int64_t b) {
  return std::string(first) + "=" + std::to_string(a) + " " + std::string(second) + "=" +
         std::to_string(b);
}

std::optional<std::pair<std::int64_t, std::int64_t>> parseCountPair(std::string_view message,
                                                                    std::string_view first,
                                                                    std::string_view second) {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
    message.remove_suffix(1);
  }
  auto a = take(message, first);
  if (!a || message.empty() || message.front() != ' ') {
    return std::nullopt;
  }
  message.remove_prefix(1);
  auto b = take(message, second);
  if (!b || !message.empty()) {
    return std::nullopt;
  }
  return std::pair{*a, *b};
}

}  // namespace kvc::policy
