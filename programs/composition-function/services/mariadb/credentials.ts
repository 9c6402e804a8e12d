/**
 * a9s MariaDB's binding credentials: PostgreSQL's keys (`host`, `port`, `hosts`, `uri` as
 * mysql://user:password@host:port/name) plus `cacrt`; upstream's endpoint is `host`:`port`
 * labelled SQL (provider-anynines servicebinding.go, anynines/klutchio 0b4539e).
 */
import type { DataServiceCredentials } from "../contract/shape.js";
import { sqlReferences } from "../contract/sql.js";

export const mariadb: DataServiceCredentials = {
  type: "mariadb",
  instanceType: "MariaDB",
  references: () => sqlReferences(3306),
};
