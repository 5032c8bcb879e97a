// Every spelling the engines' parsers read as an owned flag, and the near misses they do not.
#include "kvc/policy/inject/flag_spelling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>

namespace kvc::policy {
namespace {

constexpr std::array<std::string_view, 3> kVLLMOwned{"--kv-transfer-config", "--kv-cache-dtype",
                                                     "--kv-events-config"};
constexpr std::array<std::string_view, 3> kSGLangOwned{
    "--hicache-storage-backend", "--hicache-storage-backend-extra-config", "--kv-cache-dtype"};

struct Spelling {
  std::string_view token;
  std::optional<std::string_view> reads;  // the owned flag the parser reads, or none
};

TEST(EngineTables, AreSortedUniqueAndHoldTheOwnedFlags) {
  for (Engine engine : {Engine::VLLM, Engine::SGLang}) {
    ASSERT_FALSE(engineClis(engine).empty());
    for (const EngineCli& cli : engineClis(engine)) {
      EXPECT_TRUE(std::is_sorted(cli.flags.begin(), cli.flags.end())) << cli.engine;
      EXPECT_EQ(std::adjacent_find(cli.flags.begin(), cli.flags.end()), cli.flags.end());
      EXPECT_TRUE(std::binary_search(cli.flags.begin(), cli.flags.end(), "--kv-cache-dtype"));
    }
  }
}

TEST(FlagSpelling, VLLMReadsExactPrefixUnderscoreAndDottedForms) {
  const Spelling cases[] = {
      {"--kv-transfer-config", "--kv-transfer-config"},
      {"--kv-transfer-config={\"kv_connector\":\"X\"}", "--kv-transfer-config"},
      {"--kv-transfer-conf", "--kv-transfer-config"},
      {"--kv-transfer", "--kv-transfer-config"},
      {"--kv_transfer_config", "--kv-transfer-config"},
      {"--kv_transfer_conf=x", "--kv-transfer-config"},
      {"--kv-transfer_config", "--kv-transfer-config"},
      {"--kv-transfer-config.kv_role=kv_both", "--kv-transfer-config"},
      {"--kv-t.kv_role=kv_both", "--kv-transfer-config"},
      {"--kv_transfer_config.kv_connector", "--kv-transfer-config"},
      {"--kv-cache-dtype", "--kv-cache-dtype"},  // exact wins over the longer flag
      {"--kv-cache-dtype=fp8", "--kv-cache-dtype"},
      {"--kv_cache_dtype=fp8", "--kv-cache-dtype"},
      {"--kv-events-config", "--kv-events-config"},
      {"--kv-cache-dtype-skip-layers", std::nullopt},  // another exact flag
      {"--kv-cache-d", std::nullopt},                  // ambiguous: dtype, dtype-skip-layers
      {"--kv", std::nullopt},                          // ambiguous
      {"--model", std::nullopt},
      {"-kv-transfer-config", std::nullopt},  // not a long option
      {"kv-transfer-config", std::nullopt},
      {"--", std::nullopt},
      {"--kv-transfer-configs", std::nullopt},  // no flag starts with it
  };
  for (const Spelling& c : cases) {
    EXPECT_EQ(spelledFlag(c.token, Engine::VLLM, kVLLMOwned), c.reads) << c.token;
  }
}

TEST(FlagSpelling, VLLMAscendReadsVLLMsParser) {
  EXPECT_EQ(spelledFlag("--kv_transfer_conf", Engine::VLLMAscend, kVLLMOwned),
            "--kv-transfer-config");
}

TEST(FlagSpelling, SGLangReadsExactAndPrefixOnly) {
  const Spelling cases[] = {
      {"--hicache-storage-backend", "--hicache-storage-backend"},
      {"--hicache-storage-backend=mooncake", "--hicache-storage-backend"},
      {"--hicache-storage-backend-extra-config", "--hicache-storage-backend-extra-config"},
      {"--hicache-storage-backend-e", "--hicache-storage-backend-extra-config"},
      {"--hicache-storage-backend-extra-config={}", "--hicache-storage-backend-extra-config"},
      {"--hicache-storage-b", std::nullopt},            // ambiguous between the two owned flags
      {"--hicache_storage_backend", std::nullopt},      // SGLang does not rewrite '_'
      {"--hicache-storage-backend.x=1", std::nullopt},  // nor read dotted members
      {"--kv-cache-dtype", "--kv-cache-dtype"},
      {"--hicache-storage-prefetch-policy", std::nullopt},
  };
  for (const Spelling& c : cases) {
    EXPECT_EQ(spelledFlag(c.token, Engine::SGLang, kSGLangOwned), c.reads) << c.token;
  }
}

TEST(FlagSpelling, AUniquePrefixCountsOnlyWhenItSelectsAWantedFlag) {
  constexpr std::array<std::string_view, 1> kSwitch{"--enable-hierarchical-cache"};
  EXPECT_EQ(spelledFlag("--enable-hierarchical-cache", Engine::SGLang, kSwitch),
            "--enable-hierarchical-cache");
  EXPECT_EQ(spelledFlag("--enable-hierarchical-c", Engine::SGLang, kSwitch),
            "--enable-hierarchical-cache");
  EXPECT_EQ(spelledFlag("--enable", Engine::SGLang, kSwitch), std::nullopt);
}

TEST(FlagSpelling, AWantedFlagMissingFromTheTableStillCounts) {
  const std::string_view flags[] = {"--alpha", "--beta"};
  const EngineCli cli{"vllm", "test", flags, true, true};
  constexpr std::array<std::string_view, 1> kWanted{"--gamma-ray"};
  EXPECT_EQ(spelledFlag("--gamma", cli, kWanted), "--gamma-ray");
  EXPECT_EQ(spelledFlag("--gamma_ray=1", cli, kWanted), "--gamma-ray");
  EXPECT_EQ(spelledFlag("--al", cli, kWanted), std::nullopt);
}

}  // namespace
}  // namespace kvc::policy
