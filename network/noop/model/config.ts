import { z } from "zod";

/** NOOP: the connection is recorded, nothing is built (the data service is reachable already). */
export const noopConnector = z.object({ implementation: z.literal("noop") }).strict();
