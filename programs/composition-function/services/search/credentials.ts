/**
 * a9s Search's (OpenSearch's) binding credentials: `host` is a list of URLs
 * (`[https://h:9200]`), `hosts` the nodes with `port`, and `scheme`, `cacrt`; upstream's
 * endpoint is the first URL of `host`, labelled Search (extractBracketHost in provider-anynines
 * servicebinding.go, anynines/klutchio 0b4539e).
 */
import type { DataServiceCredentials } from "../contract/shape.js";

export const search: DataServiceCredentials = {
  type: "search",
  instanceType: "OpenSearch",
  references: () => [
    { kind: "urls", key: "host", defaultPort: 9200, label: "Search", required: true },
    { kind: "hosts", key: "hosts", portKey: "port", defaultPort: 9200, label: "Search" },
  ],
};
