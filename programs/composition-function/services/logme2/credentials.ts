/**
 * a9s LogMe2's binding credentials: `host`, one URL (https://h:9200), and `syslog_drain_url`
 * (syslog-tls://h:6514), with `cacrt`; upstream's endpoint is `host` labelled Logme2
 * (extractPlainHost in provider-anynines servicebinding.go, anynines/klutchio 0b4539e).
 */
import type { DataServiceCredentials } from "../contract/shape.js";

export const logme2: DataServiceCredentials = {
  type: "logme2",
  instanceType: "LogMe2",
  references: () => [
    { kind: "url", key: "host", label: "Logme2", required: true },
    { kind: "url", key: "syslog_drain_url", defaultPort: 6514, label: "Syslog" },
  ],
};
