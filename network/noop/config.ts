import { z } from "zod";
import type { ImplementationSpec } from "../implementation";

/** NOOP: the connection is recorded, nothing is built (the data service is reachable already). */
export const noopConnector = z.object({ implementation: z.literal("noop") }).strict();

export const noop: ImplementationSpec<"noop", typeof noopConnector> = {
  name: "noop",
  realisation: "ignored",
  summary:
    "nothing is built: the consumer reaches the instance as it is (a marker NetworkPath records the connection)",
  schema: noopConnector,
};
