import { strict as assert } from "node:assert";
import { endpointList, throughPaths } from "../../test-helpers.js";
import { mariadb } from "./credentials.js";

// provider-anynines' MariaDB fixture (servicebinding_test.go, anynines/klutchio 0b4539e).
const SECRET = {
  cacrt: "-----BEGIN CERTIFICATE-----\nMIIDGzsz\n-----END CERTIFICATE-----\n",
  host: "d15575b.service.dc1.a9s-mariadb-consul",
  hosts: "[d15575b-mariadb-0.node.dc1.a9s-mariadb-consul]",
  name: "d15575b",
  password: "a9s-password",
  port: "3306",
  uri: "mysql://a9s-brk-usr:a9s-password@d15575b.service.dc1.a9s-mariadb-consul:3306/d15575b",
  username: "a9s-brk-usr",
};

describe("data service mariadb: credentials", () => {
  it("rewrites every address and keeps the CA certificate", () => {
    const { endpoints, rewritten } = throughPaths(mariadb, SECRET, {
      "d15575b.service.dc1.a9s-mariadb-consul:3306": "np.app:30011",
      "d15575b-mariadb-0.node.dc1.a9s-mariadb-consul:3306": "np.app:30011",
    });
    assert.deepEqual(endpointList(endpoints), [
      "SQL d15575b.service.dc1.a9s-mariadb-consul:3306",
      "SQL d15575b-mariadb-0.node.dc1.a9s-mariadb-consul:3306",
    ]);
    assert.deepEqual(rewritten, {
      ...SECRET,
      host: "np.app",
      hosts: "[np.app]",
      port: "30011",
      uri: "mysql://a9s-brk-usr:a9s-password@np.app:30011/d15575b",
    });
  });

  it("takes MariaDB's port where the credentials hold none", () => {
    const bare = { host: SECRET.host, username: SECRET.username, password: SECRET.password };
    assert.deepEqual(
      endpointList(
        throughPaths(mariadb, bare, { "d15575b.service.dc1.a9s-mariadb-consul:3306": "a:1" }).endpoints,
      ),
      ["SQL d15575b.service.dc1.a9s-mariadb-consul:3306"],
    );
  });
});
