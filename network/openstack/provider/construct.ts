import * as openstack from "@pulumi/openstack";
import * as pulumi from "@pulumi/pulumi";
import { planRoutedPath } from "../../../lib/cloud/openstack/network-plan";
import { planIngressRules } from "../../../lib/cloud/ingress-rules";
import { isKnown } from "../../../providers/kit/schema-model";
import { type Args, type Constructor, dataServicePortsOf, refuse } from "../../../providers/kit/construct";
import { OpenstackRoutedPath } from "../routed-path";

/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument */
// Inputs arrive checked against programs/klutch-provider/catalog.ts (provider.ts); see providers/kit/construct.ts.

export function routedPathProblems(values: Args): string[] {
  const problems: string[] = [];
  for (const field of ["app", "dataService"])
    if (!isKnown((values[field] as Args | undefined)?.cidr))
      problems.push(`${field}.cidr must be known before the component is created (it decides the routes)`);
  const ports = dataServicePortsOf(values.dataServicePorts);
  problems.push(...ports.problems);
  if (problems.length > 0) return problems;
  const appCidr = (values.app as Args).cidr as string;
  const dataCidr = (values.dataServiceCidr ?? (values.dataService as Args).cidr) as string;
  try {
    planRoutedPath(appCidr, dataCidr);
    planIngressRules(ports.data!.dataServicePorts, [appCidr]);
  } catch (e) {
    // The planner speaks of the config model's setting; here it is the app network's cidr.
    problems.push((e as Error).message.replace("network.nodeCidr ", "app.cidr "));
  }
  return problems;
}

function openstackSide(
  name: string,
  label: string,
  input: pulumi.Input<Args>,
  s: Args,
  opts: pulumi.ComponentResourceOptions,
) {
  const region = typeof s.region === "string" ? s.region : undefined;
  const field = (key: string) => pulumi.output(input).apply((v) => v[key] as string);
  return {
    provider: new openstack.Provider(
      `${name}-${label}-openstack`,
      { ...(region ? { region } : {}) },
      { parent: opts.parent },
    ),
    cidr: s.cidr as string,
    // Only floating IPs use it; the routed path makes none.
    externalNetworkId: "",
    networkId: field("networkId"),
    subnetId: field("subnetId"),
    routerId: field("routerId"),
  };
}

export const openstackConstructors: Record<string, Constructor> = {
  "klutch:network:OpenstackRoutedPath": (name, args, opts, values) => {
    refuse("OpenstackRoutedPath", name, routedPathProblems(values));
    const path = new OpenstackRoutedPath(
      name,
      {
        app: openstackSide(name, "app", args.app, values.app, opts),
        dataService: openstackSide(name, "data-service", args.dataService, values.dataService, opts),
        dataServiceCidr: args.dataServiceCidr,
        dataServicePorts: dataServicePortsOf(values.dataServicePorts).data!.dataServicePorts,
        appLabel: args.appLabel ?? "app cluster",
      },
      opts,
    );
    return { resource: path, outputs: { securityGroupId: path.securityGroupId } };
  },
};
