/**
 * a9s MongoDB's binding credentials: no `host` or `port`, but `hosts`, every replica set member
 * as host:port (`[h0:27017 h1:27017]`), and `uri` listing them in its authority
 * (mongodb://user:password@h0:27017,h1:27017/db?ssl=true); upstream labels the first of `hosts`
 * MongoDB (extractBracketHost in provider-anynines servicebinding.go, anynines/klutchio 0b4539e).
 * Every member is an endpoint: a driver given the replica set dials each.
 */
import type { DataServiceCredentials } from "../contract/shape.js";

export const mongodb: DataServiceCredentials = {
  type: "mongodb",
  instanceType: "MongoDB",
  references: () => [
    { kind: "hosts", key: "hosts", defaultPort: 27017, label: "MongoDB", required: true },
    { kind: "url", key: "uri", defaultPort: 27017, label: "MongoDB" },
  ],
};
