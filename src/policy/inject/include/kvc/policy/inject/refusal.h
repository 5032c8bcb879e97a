#pragma once
// Why a Pod was refused. Each reason is one row of the seed's "Refusals and fixes" table (or one
// launcher rule); its name is stable product surface: it labels metrics, Events and the
// `check-inject` table, so tests match on it rather than on prose.

#include <string>
#include <string_view>

namespace kvc::policy {

enum class RefusalReason {
  // The annotation vocabulary.
  UnknownKey,
  DomainAnnotation,
  RecordSupplied,
  EngineMissing,
  EngineInvalid,
  ManufacturerInvalid,
  RoleInvalid,
  ForwardingInvalid,
  // Resolution of the Binding, its pool and backend.
  BindingMissing,
  BindingCrossNamespace,
  BindingNotFound,
  BindingTerminating,
  PoolNotFound,
  LedgerNotAvailable,
  PoolNamesNoBackend,
  BackendNotFound,
  ClientEndpointMissing,
  TransportUnsupported,
  TransportMixed,
  // The target container.
  NoContainers,
  ContainerAmbiguous,
  ContainerNotFound,
  InitContainer,
  // Keys the injection owns.
  OwnedKeyConflict,
  KVCacheDtypeOwned,
  StorageCollision,
  // The launch line.
  NoLaunchLine,
  ArgsWithoutCommand,
  LauncherWithoutProgram,
  ShellCommandString,
  HiddenCommandLine,
  ScriptLaunch,
  UnrecognisedLauncher,
  EngineMismatch,
};

std::string_view refusalReasonName(RefusalReason reason);

struct Refusal {
  RefusalReason reason;
  std::string message;  // what is at fault, why, and the fix — the text the webhook returns
};

}  // namespace kvc::policy
