#include "kvc/policy/model_deployment/model_deployment_plan.h"

#include "kvc/policy/model_deployment/model_deployment_endpoint.h"
#include "kvc/policy/model_deployment/model_deployment_replicas.h"
#include "kvc/policy/store/store_workload.h"

namespace kvc::policy {
namespace {

// What the pass renders, or why nothing is (every role or none).
struct Render {
  std::vector<RenderedRole> roles;
  std::optional<std::string> error;
};

Render render(const ModelDeploymentObservation& seen) {
  Render out;
  auto runtime = modelDeploymentRuntime(seen.deployment);
  if (!runtime.ok()) {
    out.error = runtime.status().message();
    return out;
  }
  ModelDeploymentInputs inputs;
  inputs.settings = seen.settings;
  inputs.manufacturer = runtime->manufacturer;
  inputs.binding = seen.resolution;
  if (auto roles = renderModelDeployment(seen.deployment, inputs); roles.ok()) {
    out.roles = std::move(roles).value();
  } else {
    out.error = roles.status().message();
  }
  return out;
}

// Per spec role: this pass's render (hash, connector) and its live Deployment.
std::vector<ModelDeploymentRoleFacts> roleFacts(const ModelDeploymentObservation& seen,
                                                const std::vector<RenderedRole>& rendered) {
  std::vector<ModelDeploymentRoleFacts> out;
  for (const api::ModelDeploymentRole& role : seen.deployment.spec.roles) {
    ModelDeploymentRoleFacts facts;
    facts.name = role.name;
    for (const RenderedRole& done : rendered) {
      if (done.name == role.name) {
        facts.rendered_hash = stringAt(
            done.deployment,
            {"spec", "template", "metadata", "annotations", kPodSpecHashAnnotation.data()});
        facts.attached = done.attached;
      }
    }
    if (auto it = seen.role_deployments.find(role.name); it != seen.role_deployments.end()) {
      facts.deployment = observeRoleDeployment(it->second);
    }
    out.push_back(std::move(facts));
  }
  return out;
}

// RuntimeVersionSkew among the running replicas of the current templates: said again only when
// the set of builds differs from the one last said.
void planSkew(const ModelDeploymentObservation& seen,
              const std::vector<ModelDeploymentRoleFacts>& roles, ModelDeploymentPlan& plan) {
  if (!seen.replicas) {
    return;
  }
  std::map<std::string, std::string> current;
  for (const ModelDeploymentRoleFacts& role : roles) {
    if (role.deployment && !role.deployment->pod_spec_hash.empty()) {
      current[role.name] = role.deployment->pod_spec_hash;
    }
  }
  std::optional<RuntimeSkew> skew =
      runtimeVersionSkew(seen.deployment.metadata.name, *seen.replicas, current);
  if (!skew) {
    plan.forget_skew = true;
    return;
  }
  if (seen.skew_reported == skew->signature) {
    return;  // said already
  }
  plan.skew_signature = std::move(skew->signature);
  plan.skew_event = std::move(skew->event);
}

}  // namespace

Result<DeploymentRuntime> modelDeploymentRuntime(const api::ModelDeployment& deployment) {
  KVC_ASSIGN_OR_RETURN(std::string manufacturer, modelDeploymentManufacturer(deployment));
  KVC_ASSIGN_OR_RETURN(Engine engine, modelDeploymentEngine(deployment, manufacturer));
  return DeploymentRuntime{std::move(manufacturer), engine};
}

ModelDeploymentPlan planModelDeployment(const ModelDeploymentObservation& seen) {
  ModelDeploymentPlan plan;
  const api::ModelDeployment& md = seen.deployment;
  Render rendered = render(seen);
  const std::optional<Json> service = policy::renderEndpointService(md);
  if (!rendered.error && !seen.applied) {
    plan.apply = std::move(rendered.roles);  // 1: the rest is planned from what the apply did
    plan.service = service;
    return plan;
  }
  ModelDeploymentFacts facts;
  facts.deployment = md;
  facts.binding = seen.binding;
  facts.resolution = seen.resolution;
  facts.refusal = seen.refusal;
  facts.render_error = rendered.error;
  if (!rendered.error && seen.applied->refused) {
    facts.render_error = seen.applied->refused;
    rendered.roles.clear();
  } else if (!rendered.error && service) {
    facts.endpoint = endpointAddress(md);
  }
  if (facts.render_error && seen.service_exists) {
    facts.endpoint = endpointAddress(md);  // nothing applied: the Service still fronts
  }
  if (md.spec.kv_cache) {
    plan.hold_binding = true;  // 2
  }
  facts.roles = roleFacts(seen, rendered.roles);
  planSkew(seen, facts.roles, plan);                            // 4
  plan.status = modelDeploymentStatusFor(facts, md, seen.now);  // 3
  plan.next = ModelDeploymentNext::Resync;
  return plan;
}

ModelDeploymentPlan planModelDeploymentTeardown(const ModelDeploymentObservation& seen) {
  ModelDeploymentPlan plan;
  for (const Json& child : seen.owned_workloads) {
    if (stringAt(child, {"metadata", "deletionTimestamp"}).empty()) {
      plan.delete_in_foreground.push_back(child);
    }
  }
  ModelDeploymentFacts facts;
  facts.deployment = seen.deployment;
  facts.roles = roleFacts(seen, {});
  facts.binding = seen.binding;
  facts.pods_left = seen.pods_left;
  plan.status = modelDeploymentStatusFor(facts, seen.deployment, seen.now);
  if (holdsBinding(facts)) {
    plan.next = ModelDeploymentNext::DeletingPoll;
    return plan;
  }
  // Gone: nothing writes under the Binding's domain any more.
  plan.forget_skew = true;
  if (seen.deployment.spec.kv_cache) {
    plan.hold_binding = false;
  }
  plan.next = ModelDeploymentNext::Done;
  return plan;
}

ModelDeploymentStatusPlan modelDeploymentStatusFor(const ModelDeploymentFacts& facts,
                                                   const api::ModelDeployment& current,
                                                   const std::string& now) {
  ModelDeploymentStatusPlan out;
  out.facts = facts;
  out.facts.deployment = current;
  out.status = modelDeploymentStatus(out.facts, current.metadata.generation, now);
  out.events = modelDeploymentEvents(current.status, out.status);
  return out;
}

}  // namespace kvc::policy
