import type { z } from "zod";
import { environmentSchemaWith } from "../../lib/config/schema";
import { DEFAULT_IMPLEMENTATION, networkConnector } from "../../network/registry";

/**
 * The stack config as the implementations in the registry make it: lib/config/schema.ts's
 * model with each app cluster's `networkConnector` one of the registered implementations'
 * schemas (by `implementation`), the registry's default where it is left out.
 */
export const { appCluster, environmentSchema } = environmentSchemaWith(
  // The default implementation needs no setting but its name (network/registry.test.ts).
  networkConnector.prefault({ implementation: DEFAULT_IMPLEMENTATION } as z.input<typeof networkConnector>),
);

/** An environment with each app cluster's connector settings typed by its implementation. */
export type EnvironmentConfig = z.output<typeof environmentSchema>;
export type EnvironmentConfigInput = z.input<typeof environmentSchema>;
export type AppClusterConfig = z.output<typeof appCluster>;
export type NetworkConnectorConfig = AppClusterConfig["networkConnector"];
