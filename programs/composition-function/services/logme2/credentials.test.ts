import { strict as assert } from "node:assert";
import { endpointList, throughPaths } from "../../test-helpers.js";
import { logme2 } from "./credentials.js";

// provider-anynines' LogMe2 fixture (servicebinding_test.go, anynines/klutchio 0b4539e).
const SECRET = {
  cacrt: "-----BEGIN CERTIFICATE-----\nMIIDGzszfasde....8tn9ebYK0k2Qt\n-----END CERTIFICATE-----\n",
  host: "https://hsdxxxxxx-os.service.dc1.dsf2.a9ssvc:9200",
  password: "a9scbe8462ee571f12d95b3a950e1bf8b2445a59983",
  syslog_drain_url: "syslog-tls://d765411-fluentd.service.dc1.dsf2.a9ssvc:6514",
  username: "a9s94bd153ddf5978f1eae7c88b57a27721430600d2",
};

describe("data service logme2: credentials", () => {
  it("names the dashboard's URL and the syslog drain: two endpoints, both URLs rewritten", () => {
    const { endpoints, rewritten } = throughPaths(logme2, SECRET, {
      "hsdxxxxxx-os.service.dc1.dsf2.a9ssvc:9200": "np.app:30051",
      "d765411-fluentd.service.dc1.dsf2.a9ssvc:6514": "np.app:30052",
    });
    assert.deepEqual(endpointList(endpoints), [
      "Logme2 hsdxxxxxx-os.service.dc1.dsf2.a9ssvc:9200",
      "Syslog d765411-fluentd.service.dc1.dsf2.a9ssvc:6514",
    ]);
    assert.deepEqual(rewritten, {
      ...SECRET,
      host: "https://np.app:30051",
      syslog_drain_url: "syslog-tls://np.app:30052",
    });
  });

  it("a URL without a port takes its scheme's", () => {
    const { endpoints, rewritten } = throughPaths(
      logme2,
      { host: "https://logs.internal/ui" },
      { "logs.internal:443": "np.app:30053" },
    );
    assert.deepEqual(endpointList(endpoints), ["Logme2 logs.internal:443"]);
    assert.equal(rewritten.host, "https://np.app:30053/ui");
  });
});
