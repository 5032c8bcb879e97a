#pragma once
// The security contexts of the store's Pods (docs/security.md, "Hardened Pods"). The leader and
// the seed of its policy file run as the store image's user, non-root, on a read-only root
// filesystem, with every capability dropped, no privilege escalation and the runtime's default
// seccomp profile: the master writes only its policy file, on an emptyDir. Members and the disk
// tier's cleanup Pods run as the image's user (the tier directory belongs to it, contract §3.5),
// so they get the same defaults under what the backend declares: a declared field wins, and a
// fabric transport adds back only the capabilities it needs (IPC_LOCK, SYS_RESOURCE).

#include <cstdint>

#include "kvc/common/json.h"

namespace kvc::policy {

// The user of this project's store image (images/store/Containerfile) and of the published one.
inline constexpr std::int64_t kStoreImageUser = 65532;

// The Pod-level context of the leader: its user is fixed, whatever the image's default, so an
// image built to run as root still runs the master unprivileged.
Json leaderPodSecurityContext();

// The container-level context every store container starts from: no escalation, no
// capabilities, a read-only root filesystem.
Json restrictedContainerSecurityContext();

// The Pod-level context of members and cleanup Pods: the runtime's seccomp profile; non-root
// unless the backend declared a root user for the group (then its tier files belong to root and
// the cleanup must run as root too).
Json memberPodSecurityContext(const Json& declared);

// 'declared' over the restricted defaults over 'derived' (nil fields filled, capabilities.add
// the sorted union, see mergedSecurityContext). Escalation is left to the runtime where the
// declared context makes "no escalation" invalid: a privileged container, or one adding
// CAP_SYS_ADMIN (the API server refuses either together with allowPrivilegeEscalation: false).
Json hardenedContainerSecurityContext(const Json& declared, const Json& derived);

// The declared context copied, nil fields filled from 'derived', capabilities.add the sorted
// union of both (contract §3.5).
Json mergedSecurityContext(const Json& declared, const Json& derived);

}  // namespace kvc::policy
