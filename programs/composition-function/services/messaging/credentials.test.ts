import { strict as assert } from "node:assert";
import { endpointList, throughPaths } from "../../test-helpers.js";
import { messaging } from "./credentials.js";

// upstream's Messaging keys as provider-anynines flattens the broker's nested "protocols"
// (servicebinding_test.go's credentials, anynines/klutchio 0b4539e; flattenmap.go: dotted keys,
// lists as Go prints them, a root key equal to a nested one dropped).
const SECRET = {
  http_api_uri: "https://xxxx:a9sxx@hxxx.service:15672/api/",
  http_api_uris: "[https://xxxx:a9sxx@hxxx.service:15672/api/]",
  password: "a9sxx",
  "protocols.amqp_ssl.host": "hxxx.service",
  "protocols.amqp_ssl.hosts": "[hxxx.service]",
  "protocols.amqp_ssl.port": "5671",
  "protocols.amqp_ssl.ssl": "true",
  "protocols.amqp_ssl.uri": "amqps://xxxx:a9sxx@hxxx.service:5671",
  "protocols.amqp_ssl.uris": "[amqps://xxxx:a9sxx@hxxx.service:5671]",
  "protocols.management.path": "/api",
  "protocols.management.uri": "https://xxxx:a9sxx@hxxx.service:15672/api/",
  "protocols.management.uris": "[https://xxxx:a9sxx@hxxx.service:15672/api/]",
  username: "xxxx",
};

describe("data service messaging: credentials", () => {
  it("names the management API and AMQP over TLS: two endpoints, one connection each", () => {
    const { endpoints, rewritten } = throughPaths(messaging, SECRET, {
      "hxxx.service:15672": "np.app:30071",
      "hxxx.service:5671": "np.app:30072",
    });
    assert.deepEqual(endpointList(endpoints), ["HTTP API hxxx.service:15672", "AMQP SSL hxxx.service:5671"]);
    assert.deepEqual(rewritten, {
      ...SECRET,
      http_api_uri: "https://xxxx:a9sxx@np.app:30071/api/",
      http_api_uris: "[https://xxxx:a9sxx@np.app:30071/api/]",
      "protocols.amqp_ssl.host": "np.app",
      "protocols.amqp_ssl.hosts": "[np.app]",
      "protocols.amqp_ssl.port": "30072",
      "protocols.amqp_ssl.uri": "amqps://xxxx:a9sxx@np.app:30072",
      "protocols.amqp_ssl.uris": "[amqps://xxxx:a9sxx@np.app:30072]",
      "protocols.management.uri": "https://xxxx:a9sxx@np.app:30071/api/",
      "protocols.management.uris": "[https://xxxx:a9sxx@np.app:30071/api/]",
    });
  });

  it("a URI without a port takes the protocol's, and is written with the path's", () => {
    const plain = { "protocols.management.uri": "http://username:password@hostname.node.dcx.consul" };
    const { endpoints, rewritten } = throughPaths(messaging, plain, {
      "hostname.node.dcx.consul:15672": "np.app:30073",
    });
    assert.deepEqual(endpointList(endpoints), ["Management hostname.node.dcx.consul:15672"]);
    assert.equal(rewritten["protocols.management.uri"], "http://username:password@np.app:30073");
  });

  it('reads the JSON-printed list upstream\'s fixture has (` ["h"]`) and writes it back as JSON', () => {
    const { rewritten } = throughPaths(
      messaging,
      { host: "hostname.node.dcx.consul", hosts: ' ["hostname.node.dcx.consul"]', port: "5672" },
      { "hostname.node.dcx.consul:5672": "np.app:30074" },
    );
    assert.deepEqual(rewritten, { host: "np.app", hosts: '["np.app"]', port: "30074" });
  });

  it("waits while no key names an endpoint", () => {
    assert.equal(throughPaths(messaging, { username: "u" }, {}).endpoints.kind, "waiting");
  });
});
