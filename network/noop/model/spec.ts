import type { ImplementationSpec } from "../../contract/implementation";
import { noopConnector } from "./config";

/** The implementation as the registry (network/registry.ts) lists it. */
export const noop: ImplementationSpec<"noop", typeof noopConnector> = {
  name: "noop",
  realisation: "ignored",
  summary:
    "nothing is built: the consumer reaches the instance as it is (a marker NetworkPath records the connection)",
  schema: noopConnector,
  // Nothing to build, nothing for the bridge: its marker NetworkPath is left alone.
  pulumi: {},
};
