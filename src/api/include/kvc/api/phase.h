#pragma once
// The phases of status.phase (contract §1 "Status conventions"). Backend, pool and Binding share
// the first five; a ModelDeployment has its own. Every phase but Ready carries a phaseMessage.

#include <string_view>

namespace kvc::api {

inline constexpr std::string_view kPhaseProvisioning = "Provisioning";
inline constexpr std::string_view kPhaseReady = "Ready";
inline constexpr std::string_view kPhaseDegraded = "Degraded";
inline constexpr std::string_view kPhaseError = "Error";
inline constexpr std::string_view kPhaseDeleting = "Deleting";
// ModelDeployment only.
inline constexpr std::string_view kPhaseStarting = "Starting";

}  // namespace kvc::api
