#include "kvc/policy/inject/refusal.h"

namespace kvc::policy {

std::string_view refusalReasonName(RefusalReason reason) {
  switch (reason) {
    case RefusalReason::UnknownKey:
      return "UnknownKey";
    case RefusalReason::DomainAnnotation:
      return "DomainAnnotation";
    case RefusalReason::RecordSupplied:
      return "RecordSupplied";
    case RefusalReason::EngineMissing:
      return "EngineMissing";
    case RefusalReason::EngineInvalid:
      return "EngineInvalid";
    case RefusalReason::ManufacturerInvalid:
      return "ManufacturerInvalid";
    case RefusalReason::RoleInvalid:
      return "RoleInvalid";
    case RefusalReason::ForwardingInvalid:
      return "ForwardingInvalid";
    case RefusalReason::BindingMissing:
      return "BindingMissing";
    case RefusalReason::BindingCrossNamespace:
      return "BindingCrossNamespace";
    case RefusalReason::BindingNotFound:
      return "BindingNotFound";
    case RefusalReason::BindingTerminating:
      return "BindingTerminating";
    case RefusalReason::PoolNotFound:
      return "PoolNotFound";
    case RefusalReason::LedgerNotAvailable:
      return "LedgerNotAvailable";
    case RefusalReason::PoolNamesNoBackend:
      return "PoolNamesNoBackend";
    case RefusalReason::BackendNotFound:
      return "BackendNotFound";
    case RefusalReason::ClientEndpointMissing:
      return "ClientEndpointMissing";
    case RefusalReason::TransportUnsupported:
      return "TransportUnsupported";
    case RefusalReason::TransportMixed:
      return "TransportMixed";
    case RefusalReason::NoContainers:
      return "NoContainers";
    case RefusalReason::ContainerAmbiguous:
      return "ContainerAmbiguous";
    case RefusalReason::ContainerNotFound:
      return "ContainerNotFound";
    case RefusalReason::InitContainer:
      return "InitContainer";
    case RefusalReason::OwnedKeyConflict:
      return "OwnedKeyConflict";
    case RefusalReason::KVCacheDtypeOwned:
      return "KVCacheDtypeOwned";
    case RefusalReason::StorageCollision:
      return "StorageCollision";
    case RefusalReason::NoLaunchLine:
      return "NoLaunchLine";
    case RefusalReason::ArgsWithoutCommand:
      return "ArgsWithoutCommand";
    case RefusalReason::LauncherWithoutProgram:
      return "LauncherWithoutProgram";
    case RefusalReason::ShellCommandString:
      return "ShellCommandString";
    case RefusalReason::HiddenCommandLine:
      return "HiddenCommandLine";
    case RefusalReason::ScriptLaunch:
      return "ScriptLaunch";
    case RefusalReason::UnrecognisedLauncher:
      return "UnrecognisedLauncher";
    case RefusalReason::EngineMismatch:
      return "EngineMismatch";
  }
  return "Unknown";
}

}  // namespace kvc::policy
