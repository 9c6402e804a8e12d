import type { ImplementationSpec } from "../../contract/implementation";
import { checkProxy } from "./checks";
import { proxyConnector } from "./config";

/** The implementation as the registry (network/registry.ts) lists it. */
export const proxy: ImplementationSpec<"proxy", typeof proxyConnector> = {
  name: "proxy",
  realisation: "proxy",
  summary:
    "a TCP proxy (HAProxy) per consumer namespace in the data-service cluster; consumers dial the proxy",
  schema: proxyConnector,
  check: checkProxy,
};
