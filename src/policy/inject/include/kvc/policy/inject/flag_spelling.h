#pragma once
// Which flag a command-line token spells, as the engine's own parser reads it.
//
// A flag is refused "in every spelling the engine's parser reads as it" (contract §7.3): the long
// form with or without `=value`; any unique prefix (Python argparse's allow_abbrev), where
// uniqueness is judged against the engine's whole flag set; and on vLLM the underscore form
// (`--kv_transfer_config`) and the dotted member form (`--kv-transfer-config.kv_role=…`). The flag
// sets are versioned data extracted from the engines' sources (data/engine-flags/).

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "kvc/policy/inject/engine.h"

namespace kvc::policy {

// One engine release's command line as its parser knows it.
struct EngineCli {
  std::string_view engine;                  // "vllm" | "sglang"
  std::string_view version;                 // the release the flag list was extracted from
  std::span<const std::string_view> flags;  // every long option, sorted and unique
  bool underscore_forms = false;            // the parser maps '_' to '-' in option names
  bool dotted_members = false;              // the parser reads --flag.key=value
};

// The flag tables of every release we know for that engine (vLLM-Ascend reads vLLM's parser).
std::span<const EngineCli> engineClis(Engine engine);

// The flag of `wanted` that `token` spells on `cli`, or nullopt. A token that is an exact flag of
// the parser spells that flag even when it also prefixes others (argparse checks exact names
// first); a prefix counts only when it selects exactly one flag of the parser (`wanted` flags
// missing from the table are counted in, so a stale table can only refuse more).
std::optional<std::string_view> spelledFlag(std::string_view token, const EngineCli& cli,
                                            std::span<const std::string_view> wanted);

// The same, over every known release of the engine: a token that any release reads as a wanted
// flag counts, because admission cannot see which release the image holds.
std::optional<std::string_view> spelledFlag(std::string_view token, Engine engine,
                                            std::span<const std::string_view> wanted);

}  // namespace kvc::policy
