#include "kvc/policy/inject/flag_spelling.h"

#include <algorithm>
#include <string>

#include "engine_flags_data.h"

namespace kvc::policy {
namespace {

// The option name a token carries: "--kv_transfer_config.kv_role=x" -> "--kv-transfer-config"
// on a parser with underscore and dotted forms; "" when the token is not a long option.
std::string optionName(std::string_view token, const EngineCli& cli) {
  if (token.size() < 3 || !token.starts_with("--")) {
    return {};
  }
  std::string_view name = token.substr(0, token.find('='));
  if (cli.dotted_members) {
    name = name.substr(0, name.find('.'));
  }
  std::string out(name);
  if (cli.underscore_forms) {
    std::replace(out.begin() + 2, out.end(), '_', '-');
  }
  return out;
}

bool contains(std::span<const std::string_view> sorted, std::string_view value) {
  return std::binary_search(sorted.begin(), sorted.end(), value);
}

}  // namespace

std::span<const EngineCli> engineClis(Engine engine) {
  return generated::engineClis(engine == Engine::SGLang ? "sglang" : "vllm");
}

std::optional<std::string_view> spelledFlag(std::string_view token, const EngineCli& cli,
                                            std::span<const std::string_view> wanted) {
  const std::string name = optionName(token, cli);
  if (name.empty()) {
    return std::nullopt;
  }
  // Exact names first, as argparse does.
  for (std::string_view flag : wanted) {
    if (flag == name) {
      return flag;
    }
  }
  if (contains(cli.flags, name)) {
    return std::nullopt;  // an exact flag of the parser that is not one we want
  }
  // Unique prefix over the parser's flags, plus wanted flags the table may lack.
  std::optional<std::string_view> only;
  std::size_t matches = 0;
  for (auto it = std::lower_bound(cli.flags.begin(), cli.flags.end(), std::string_view(name));
       it != cli.flags.end() && it->starts_with(name); ++it) {
    only = *it;
    ++matches;
  }
  for (std::string_view flag : wanted) {
    if (flag.starts_with(name) && !contains(cli.flags, flag)) {
      only = flag;
      ++matches;
    }
  }
  if (matches != 1) {
    return std::nullopt;  // unknown to the parser, or ambiguous (argparse refuses it)
  }
  for (std::string_view flag : wanted) {
    if (flag == *only) {
      return flag;
    }
  }
  return std::nullopt;
}

std::optional<std::string_view> spelledFlag(std::string_view token, Engine engine,
                                            std::span<const std::string_view> wanted) {
  for (const EngineCli& cli : engineClis(engine)) {
    if (auto flag = spelledFlag(token, cli, wanted)) {
      return flag;
    }
  }
  return std::nullopt;
}

}  // namespace kvc::policy
