/**
 * How the bridge realises each network implementation: the implementation registry
 * (network/registry.ts) says it; this file keeps the bridge's own names for it.
 */
export type { Realisation } from "../../network/implementation";
export { realisationOf, unsupportedImplementation } from "../../network/registry";
