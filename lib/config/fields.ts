import { z } from "zod";
import { cidrProblem } from "../net/cidr";

/**
 * Field types shared by the environment schema and the network implementations' own
 * config schemas (network/<implementation>/config.ts), so a CIDR or a port means the same,
 * with the same message, wherever it is set.
 */

export const cidr = z.string().superRefine((value, ctx) => {
  const problem = cidrProblem(value);
  if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
});

export const port = z.number().int("must be a whole number").min(1).max(65535);

/** Data-service ports a routed path opens (security groups, ACLs); PostgreSQL unless told. */
export const dataServicePorts = z.array(port).min(1).prefault([5432]);
