import type { GroupProgram } from "../contract/bridge-target";
import { routedProgram } from "../shared/routed-program";

/**
 * The bridge's program for a routed group: the environment stack built the route, so the
 * bridge probes each instance and reports it (network/shared/routed-program.ts).
 */
export const bridgeProgram: GroupProgram = (_group, paths) => routedProgram(paths);
