/**
 * a9s PostgreSQL's binding credentials: `host` (the primary's alias) and `port`, `hosts` (every
 * node), `uri` (postgres://user:password@host:port/name); upstream's endpoint is `host`:`port`
 * labelled SQL (initializeConnectionDetails in provider-anynines/internal/controller/
 * servicebinding/servicebinding.go, anynines/klutchio 0b4539e). Each node in `hosts` is an
 * endpoint too: a client given the list dials any of them.
 */
import type { DataServiceCredentials } from "../contract/shape.js";
import { sqlReferences } from "../contract/sql.js";

export const postgresql: DataServiceCredentials = {
  type: "postgresql",
  instanceType: "PostgreSQL",
  references: () => sqlReferences(5432),
};
