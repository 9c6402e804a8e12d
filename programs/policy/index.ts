// The Klutch network-safety policy pack: `pulumi preview --policy-pack programs/policy` (or `up`).
import { PolicyPack } from "@pulumi/policy";
import { networkPolicies } from "./policies";

new PolicyPack("klutch-network-safety", { policies: networkPolicies });
