#pragma once
// The store leader's refresh of its master's tenant-quota policy file on winning the Lease.
//
// The init container seeds the file from the policy ConfigMap when the Pod starts; a standby may
// wait hours for the Lease, and in that time the operator grants and releases domains on the
// serving master and rewrites the ConfigMap. A master started from the Pod-start copy would lose
// the domains granted since (their writers get TENANT_NOT_REGISTERED) and bring back those
// released since, until the operator's next pass. Reading the ConfigMap again between winning the
// Lease and starting the master starts it with the ledger as the operator last wrote it (it
// writes the ConfigMap before the ledger, so the ConfigMap never lacks a granted domain).

#include <optional>
#include <string>
#include <vector>

#include "kvc/common/status.h"
#include "kvc/kube/client.h"

namespace kvc::cmd::internal {

// The file the master's command line reads its policy from (-tenant_quota_connector_uri=PATH,
// one or two dashes), or nullopt when it names none.
std::optional<std::string> masterPolicyFile(const std::vector<std::string>& command);

// Rewrites `path` atomically with the key tenant-quota-policy.yaml of `config_maps`' `name`, or
// with the empty ledger when that ConfigMap does not exist (no pool is bound: what the init
// container writes then). A failed read or a document the master would refuse leaves the file
// as it is and returns the error (the caller logs it and starts the master regardless: the
// operator converges the ledger on its next pass).
Status refreshPolicyFile(const kube::Api& config_maps, const std::string& name,
                         const std::string& path);

}  // namespace kvc::cmd::internal
