#include "kvc/api/message.h"

#include "kvc/common/text.h"

namespace kvc::api {

std::string nameList(const std::vector<std::string>& names) {
  std::string out;
  const std::size_t shown = std::min(names.size(), kMaxListedNames);
  for (std::size_t i = 0; i < shown; ++i) {
    if (i > 0) {
      out += (i + 1 == shown && shown == names.size()) ? " and " : ", ";
    }
    out += names[i];
  }
  if (names.size() > shown) {
    out += " … and " + std::to_string(names.size() - shown) + " more";
  }
  return out;
}

std::string boundDetail(std::string_view detail) {
  return truncateRunes(detail, kMaxDetailRunes, " … (truncated)");
}

std::string boundMessage(std::string_view message) {
  return truncateBytes(message, kMaxMessageBytes, " … (truncated)");
}

}  // namespace kvc::api
