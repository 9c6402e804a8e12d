import * as aws from "@pulumi/aws";
import * as openstack from "@pulumi/openstack";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { dataServicePorts } from "../../lib/config/fields";
import { planRoutedPath } from "../../lib/cloud/openstack/network-plan";
import { planIngressRules } from "../../lib/cloud/ingress-rules";
import { awsVpcPeeringConnector } from "../../network/aws-vpc-peering/model/config";
import { checkPeering } from "../../network/aws-vpc-peering/model/peering-plan";
import { VpcPeering, type VpcPeeringSide } from "../../network/aws-vpc-peering/vpc-peering";
import { OpenstackRoutedPath } from "../../network/openstack/routed-path";
import { UNKNOWN, isKnown } from "../spec/schema-model";
import { type Args, type Constructor, given, itemField, refuse, zodProblems } from "./common";

/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument */
// Inputs arrive checked against provider/catalog.ts (provider.ts); see construct/common.ts.

const sideRules = z
  .object({
    region: z.string().regex(/^[a-z]{2}(-gov)?-[a-z]+-\d$/, "must be an AWS region such as eu-central-1"),
    accountId: z
      .string()
      .regex(/^\d{12}$/, "must be a 12-digit AWS account id")
      .optional(),
    roleArn: awsVpcPeeringConnector.shape.accepter.unwrap().shape.roleArn.optional(),
  })
  .passthrough();

/** Fields of a side that decide what is created: they must be known before creation. */
const SIDE_DECIDES = ["region", "accountId", "roleArn", "cidrs"] as const;

function sideProblems(side: unknown, field: string): string[] {
  if (side === UNKNOWN || typeof side !== "object" || side === null)
    return [
      `${field} must be known before the component is created (its region, CIDRs and route table names decide what is created)`,
    ];
  const s = side as Args;
  const problems = SIDE_DECIDES.filter((k) => !isKnown(s[k])).map(
    (k) => `${field}.${k} must be known before the component is created (it decides what is created)`,
  );
  const tables = s.routeTables as unknown;
  if (!Array.isArray(tables) || tables.some((t) => t === UNKNOWN || (t as Args).name === UNKNOWN))
    problems.push(
      `${field}.routeTables[].name must be known before the component is created (names key the routes)`,
    );
  if (problems.length > 0) return problems;
  problems.push(...zodProblems(sideRules, given(s), (p) => `${field}.${p}`).problems);
  return problems;
}

const PORTS = (ports: unknown) =>
  zodProblems(z.object({ dataServicePorts }), given({ dataServicePorts: ports }));

export function peeringProblems(values: Args): string[] {
  const problems = [
    ...sideProblems(values.requester, "requester"),
    ...sideProblems(values.accepter, "accepter"),
  ];
  const ports = PORTS(values.dataServicePorts);
  problems.push(...ports.problems);
  if (values.accepterRoleArn !== undefined)
    problems.push(
      ...zodProblems(
        awsVpcPeeringConnector.shape.accepter.unwrap(),
        { roleArn: values.accepterRoleArn },
        (p) => (p === "roleArn" ? "accepterRoleArn" : p),
      ).problems,
    );
  if (problems.length > 0) return problems;
  const side = (s: Args, label: string) => ({
    label: (s.label as string | undefined) ?? label,
    vpcId: typeof s.vpcId === "string" ? s.vpcId : undefined,
    cidrs: s.cidrs as string[],
    routeTables: (s.routeTables as Args[]).map((t) => t.name as string),
    region: s.region as string,
    accountId: s.accountId as string | undefined,
  });
  return checkPeering({
    requester: side(values.requester, "requester"),
    accepter: side(values.accepter, "accepter"),
    dataServicePorts: ports.data!.dataServicePorts,
    connections: values.connections,
    accepterRoleArn: values.accepterRoleArn,
  });
}

export function routedPathProblems(values: Args): string[] {
  const problems: string[] = [];
  for (const field of ["app", "dataService"])
    if (!isKnown((values[field] as Args | undefined)?.cidr))
      problems.push(`${field}.cidr must be known before the component is created (it decides the routes)`);
  const ports = PORTS(values.dataServicePorts);
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

/** One side's AWS provider: its region, its account only, and its role when given. */
function awsSide(
  name: string,
  label: string,
  input: pulumi.Input<Args>,
  s: Args,
  opts: pulumi.ComponentResourceOptions,
  shared?: aws.Provider,
): VpcPeeringSide {
  const provider =
    shared ??
    new aws.Provider(
      `${name}-${label}-aws`,
      {
        region: s.region as aws.Region,
        ...(s.accountId ? { allowedAccountIds: [s.accountId as string] } : {}),
        ...(s.roleArn
          ? {
              assumeRoles: [
                { roleArn: s.roleArn as string, sessionName: `klutch-peering-${name}`.slice(0, 64) },
              ],
            }
          : {}),
      },
      { parent: opts.parent },
    );
  const field = <T>(key: string) => pulumi.output(input).apply((v) => v[key] as T);
  return {
    label: (s.label as string | undefined) ?? label,
    provider,
    vpcId: field<string>("vpcId"),
    ...(typeof s.vpcId === "string" ? { knownVpcId: s.vpcId } : {}),
    cidrs: s.cidrs as string[],
    routeTables: (s.routeTables as Args[]).map((t, i) => ({
      key: t.name as string,
      id: itemField<string>(field<Args[]>("routeTables"), i, "id"),
    })),
    region: s.region as string,
    accountId: s.accountId as string | undefined,
  };
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

export const cloudConstructors: Record<string, Constructor> = {
  "klutch:network:VpcPeering": (name, args, opts, values) => {
    refuse("VpcPeering", name, peeringProblems(values));
    const requester = awsSide(name, "requester", args.requester, values.requester, opts);
    // With accepterRoleArn the component makes the accepter's provider itself (assuming that
    // role in the accepter's region); a second one here would never be used.
    const accepter = awsSide(
      name,
      "accepter",
      args.accepter,
      values.accepter,
      opts,
      values.accepterRoleArn ? requester.provider : undefined,
    );
    const peering = new VpcPeering(
      name,
      {
        requester,
        accepter,
        accepterRoleArn: args.accepterRoleArn,
        dataServicePorts: PORTS(values.dataServicePorts).data!.dataServicePorts,
        connections: args.connections,
        dnsResolution: args.dnsResolution,
        tags: args.tags,
      },
      opts,
    );
    return {
      resource: peering,
      outputs: {
        peeringConnectionId: peering.peeringConnectionId,
        securityGroupId: peering.securityGroupId,
        endpoints: peering.endpoints,
      },
    };
  },
  "klutch:network:OpenstackRoutedPath": (name, args, opts, values) => {
    refuse("OpenstackRoutedPath", name, routedPathProblems(values));
    const path = new OpenstackRoutedPath(
      name,
      {
        app: openstackSide(name, "app", args.app, values.app, opts),
        dataService: openstackSide(name, "data-service", args.dataService, values.dataService, opts),
        dataServiceCidr: args.dataServiceCidr,
        dataServicePorts: PORTS(values.dataServicePorts).data!.dataServicePorts,
        appLabel: args.appLabel ?? "app cluster",
      },
      opts,
    );
    return { resource: path, outputs: { securityGroupId: path.securityGroupId } };
  },
};
