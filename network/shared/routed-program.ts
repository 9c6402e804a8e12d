import * as pulumi from "@pulumi/pulumi";
import type { PathEndpoint, NetworkPathObject } from "../../lib/bridge/model";
import { pathId } from "../../lib/bridge/model";
import { ConnectivityProbe } from "./connectivity-probe";

/**
 * Routed implementations (AWS VPC peering, OpenStack routes): the environment stack
 * built the network between app clusters and data services, so each consumer dials the
 * instance itself. Per path, a ConnectivityProbe checks from the bridge (which runs in the
 * data-service network) that the instance accepts TCP; a failure is reported, not thrown.
 */
export function routedProgram(paths: NetworkPathObject[]): () => Promise<Record<string, unknown>> {
  return () => {
    const endpoints: Record<string, pulumi.Output<PathEndpoint>> = {};
    for (const p of paths) {
      const probe = new ConnectivityProbe(`probe-${pathId(p)}`, {
        host: p.spec.instanceHost,
        port: p.spec.port,
        // No proxy in between: an accepted connection is the instance's own.
        settleMs: 0,
      });
      endpoints[pathId(p)] = pulumi
        .all([probe.ready, probe.reason, probe.message])
        .apply(([ready, reason, message]) => ({
          hostForConsumer: p.spec.instanceHost,
          port: p.spec.port,
          probe: { ready, reason, message },
        }));
    }
    return Promise.resolve({ endpoints: pulumi.output(endpoints) });
  };
}
