#include "kvc/api/transport.h"

#include <array>
#include <utility>

namespace kvc::api {
namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kSpellings{{
    {"Auto", "tcp"},
    {"TCP", "tcp"},
    {"RDMA", "rdma"},
    {"EFA", "efa"},
    {"CANN", "ascend"},
    {"ROCM", "hip"},
    {"MUSA", "musa"},
    {"MACA", "maca"},
}};

}  // namespace

const std::vector<std::string_view>& transportProtocols() {
  static const std::vector<std::string_view> kValues = [] {
    std::vector<std::string_view> values;
    for (const auto& [api, artifact] : kSpellings) {
      values.push_back(api);
    }
    return values;
  }();
  return kValues;
}

std::optional<std::string> artifactProtocol(std::string_view api_protocol) {
  for (const auto& [api, artifact] : kSpellings) {
    if (api == api_protocol) {
      return std::string(artifact);
    }
  }
  return std::nullopt;
}

std::optional<std::string> apiProtocolFor(std::string_view artifact) {
  // "tcp" is reached from both Auto and TCP; TCP is the explicit answer.
  for (const auto& [api, spelling] : kSpellings) {
    if (spelling == artifact && api != "Auto") {
      return std::string(api);
    }
  }
  return std::nullopt;
}

}  // namespace kvc::api
