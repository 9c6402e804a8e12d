import { cidrProblem } from "../../net/cidr";
import type { AddIssue } from "../../config/located";

/** A Magnum cluster subnet needs room for its nodes, the load balancers and the router. */
export function checkOpenstackNetwork(nodeCidr: string, at: (string | number)[], add: AddIssue): void {
  if (cidrProblem(nodeCidr)) return;
  const prefix = Number(nodeCidr.split("/")[1]);
  if (prefix > 28)
    add([...at, "network", "nodeCidr"], `${nodeCidr} is too small for a cluster subnet; use at most a /28`);
}
