import type { ResourceValidationPolicy } from "@pulumi/policy";
import { NETWORK_RULES } from "./rules";

/** The rules as CrossGuard resource policies; mandatory, so a violating `pulumi up` stops. */
export const networkPolicies: ResourceValidationPolicy[] = NETWORK_RULES.map((rule) => ({
  name: rule.name,
  description: rule.description,
  enforcementLevel: "mandatory",
  validateResource: (args, reportViolation) => {
    for (const message of rule.check({ type: args.type, props: args.props })) reportViolation(message);
  },
}));
