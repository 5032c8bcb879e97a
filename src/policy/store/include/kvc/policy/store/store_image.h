#pragma once
// Which store images are this project's build (issue 27 §3, the seed's Step 1 and Step 4).
// This project's store image runs `kvcache store leader|member|survey`: the Lease election, the
// admin port over mutual TLS and the write fence are ours, in front of Mooncake's processes. A
// published upstream image (Mooncake's own mooncake_master and client, none of our binaries)
// cannot run them, so its Pods run Mooncake's processes themselves: one leader, no election, the
// master's admin API served by the master (no TLS: only the store's NetworkPolicy guards it).
//
// An image is taken for this project's build when its repository (the reference without tag or
// digest) is the repository of the Setting kv-cache-backend-image: every tag and variant of the
// build the Setting names counts, and so does a mirror of it once the Setting names the mirror.
// With the Setting cleared there is nothing to compare with, and every image counts as ours.

#include <string>
#include <string_view>

namespace kvc::policy {

// The repository of an image reference: without `@digest`, without `:tag` (a ':' before the last
// '/' is a registry's port), and with Docker Hub's implied prefixes `docker.io/` and
// `docker.io/library/` (or `index.docker.io/`) dropped, so `debian` and `docker.io/library/debian`
// are one repository.
std::string imageRepository(std::string_view image);

// True when `image` is this project's store build by the rule above.
bool projectStoreImage(std::string_view image, std::string_view settings_image);

}  // namespace kvc::policy
