/**
 * a9s KeyValue's (Valkey's) binding credentials: `host`, `hosts`, `load_balanced_host`, the
 * port nested as `valkey.port` (with `valkey.username`, `valkey.password`) and `cacrt`;
 * upstream's endpoint is `host`:`valkey.port` labelled KeyValue (provider-anynines
 * servicebinding.go, anynines/klutchio 0b4539e).
 */
import type { DataServiceCredentials } from "../contract/shape.js";

const port = { portKey: "valkey.port", defaultPort: 6379, label: "KeyValue" } as const;

export const keyvalue: DataServiceCredentials = {
  type: "keyvalue",
  instanceType: "Valkey",
  references: () => [
    { kind: "host", key: "host", ...port, required: true },
    { kind: "hosts", key: "hosts", ...port },
    { kind: "host", key: "load_balanced_host", ...port },
  ],
};
