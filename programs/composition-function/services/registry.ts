/**
 * The data services whose bindings the network-aware composition serves, one line each: Klutch's
 * eight service types (the serviceInstanceType enum of crossplane-api/api/common/
 * servicebinding_definition.yaml, anynines/klutchio 0b4539e).
 */
import { keyvalue } from "./keyvalue/credentials.js";
import { logme2 } from "./logme2/credentials.js";
import { mariadb } from "./mariadb/credentials.js";
import { messaging } from "./messaging/credentials.js";
import { mongodb } from "./mongodb/credentials.js";
import { postgresql } from "./postgresql/credentials.js";
import { prometheus } from "./prometheus/credentials.js";
import { search } from "./search/credentials.js";
import type { DataServiceCredentials } from "./contract/shape.js";

export const DATA_SERVICES: readonly DataServiceCredentials[] = [
  postgresql,
  mariadb,
  mongodb,
  keyvalue,
  search,
  logme2,
  prometheus,
  messaging,
];

export function dataServiceOf(type: string | undefined): DataServiceCredentials | undefined {
  return DATA_SERVICES.find((s) => s.type === type);
}
