import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { UNKNOWN, isKnown } from "../../../providers/kit/schema-model";
import {
  type Args,
  type Constructor,
  dataServicePortsOf,
  given,
  itemField,
  refuse,
  zodProblems,
} from "../../../providers/kit/construct";
import { awsVpcPeeringConnector } from "../model/config";
import { checkPeering } from "../model/peering-plan";
import { VpcPeering, type VpcPeeringSide } from "../vpc-peering";

/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument */
// Inputs arrive checked against programs/klutch-provider/catalog.ts (provider.ts); see providers/kit/construct.ts.

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

export function peeringProblems(values: Args): string[] {
  const problems = [
    ...sideProblems(values.requester, "requester"),
    ...sideProblems(values.accepter, "accepter"),
  ];
  const ports = dataServicePortsOf(values.dataServicePorts);
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

export const awsVpcPeeringConstructors: Record<string, Constructor> = {
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
        dataServicePorts: dataServicePortsOf(values.dataServicePorts).data!.dataServicePorts,
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
};
