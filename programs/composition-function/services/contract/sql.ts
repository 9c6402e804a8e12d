/** The keys the SQL services' credentials share (PostgreSQL, MariaDB): host, port, hosts, uri. */
import type { Reference } from "./references.js";

export function sqlReferences(defaultPort: number): Reference[] {
  return [
    { kind: "host", key: "host", portKey: "port", defaultPort, label: "SQL", required: true },
    { kind: "hosts", key: "hosts", portKey: "port", defaultPort, label: "SQL" },
    { kind: "url", key: "uri", defaultPort, label: "SQL" },
  ];
}
