#include "kvc/policy/usage/engine_target.h"

#include <charconv>
#include <optional>
#include <vector>

#include "kvc/policy/base/json_lookup.h"

namespace kvc::policy {
namespace {

constexpr std::string_view kContainerAnnotation = "kvcache.gpustack.ai/container";

std::optional<std::int64_t> portNumber(std::string_view text) {
  std::int64_t port = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return port;
}

const Json* engineContainer(const Json& pod) {
  const Json& containers = field(field(pod, "spec"), "containers");
  if (!containers.is_array() || containers.empty()) {
    return nullptr;
  }
  const std::string wanted =
      text(field(field(pod, "metadata"), "annotations"), kContainerAnnotation);
  if (!wanted.empty()) {
    for (const Json& container : containers) {
      if (text(container, "name") == wanted) {
        return &container;
      }
    }
  }
  return &containers.front();
}

std::optional<std::int64_t> namedMetricsPort(const Json& container) {
  const Json& ports = field(container, "ports");
  if (!ports.is_array()) {
    return std::nullopt;
  }
  for (const Json& port : ports) {
    const Json& number = field(port, "containerPort");
    if (text(port, "name") == "metrics" && number.is_number_integer()) {
      return number.get<std::int64_t>();
    }
  }
  return std::nullopt;
}

// --port N or --port=N in the command line (the last one wins, as with argparse); a value that
// is not a number gives 0, so that the target is refused rather than guessed.
std::optional<std::int64_t> portFlag(const Json& container) {
  std::vector<std::string> words;
  for (const char* name : {"command", "args"}) {
    const Json& list = field(container, name);
    if (list.is_array()) {
      for (const Json& word : list) {
        words.push_back(word.is_string() ? word.get<std::string>() : std::string());
      }
    }
  }
  std::optional<std::int64_t> port;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "--port" && i + 1 < words.size()) {
      port = portNumber(words[i + 1]).value_or(0);
    } else if (words[i].starts_with("--port=")) {
      port = portNumber(std::string_view(words[i]).substr(7)).value_or(0);
    }
  }
  return port;
}

}  // namespace

std::optional<std::string> readySince(const Json& pod) {
  const Json& conditions = field(field(pod, "status"), "conditions");
  if (!conditions.is_array()) {
    return std::nullopt;
  }
  for (const Json& condition : conditions) {
    if (text(condition, "type") == "Ready" && text(condition, "status") == "True") {
      return text(condition, "lastTransitionTime");
    }
  }
  return std::nullopt;
}

std::string engineFamily(std::string_view name) {
  std::string lower;
  for (char c : name) {
    lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  return lower == "vllm" || lower == "sglang" ? lower : std::string();
}

std::variant<EngineTarget, std::string> engineMetricsTarget(const Json& pod,
                                                            std::string_view engine) {
  if (!readySince(pod)) {
    return std::string("not Ready");
  }
  const std::string ip = text(field(pod, "status"), "podIP");
  if (ip.empty()) {
    return std::string("no Pod IP");
  }
  const Json* container = engineContainer(pod);
  if (container == nullptr) {
    return std::string("no container");
  }
  std::optional<std::int64_t> port = namedMetricsPort(*container);
  if (!port) {
    port = portFlag(*container);
  }
  if (!port) {
    port = engine == "sglang" ? kSglangDefaultPort : kVllmDefaultPort;
  }
  if (*port < 1 || *port > 65535) {
    return "the metrics port is not a port number (" + std::to_string(*port) + ")";
  }
  const std::string host = ip.find(':') == std::string::npos ? ip : "[" + ip + "]";
  return EngineTarget{std::string(engine),
                      "http://" + host + ":" + std::to_string(*port) + "/metrics"};
}

}  // namespace kvc::policy
