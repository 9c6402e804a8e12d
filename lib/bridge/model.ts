/**
 * Pure decisions of the Crossplane bridge, in named parts: the API (api.ts), grouping and capacity (grouping.ts), the local target's port slots (slots.ts), status
 * and Events (status.ts), RBAC (rbac.ts), backoff (backoff.ts) and stack locks (locks.ts).
 * This file only gathers them for existing importers.
 */

export * from "./api";
export * from "./backoff";
export * from "./grouping";
export * from "./locks";
export * from "./rbac";
export * from "./slots";
export * from "./status";
