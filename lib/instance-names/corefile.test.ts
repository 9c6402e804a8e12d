import { strict as assert } from "node:assert";
import {
  BEGIN_MARKER,
  END_MARKER,
  currentStubZones,
  stubZoneProblems,
  stubZonesSection,
  withStubZones,
  withoutStubZones,
} from "./corefile";
import { serverAddressProblem } from "./corefile-values";
import { corefile as localCorefile } from "../../host/local-clusters/node/cluster-dns";

/** The Corefile kubeadm writes into kube-system/coredns (cmd/kubeadm/app/phases/addons/dns). */
const KUBEADM = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
`;

/** EKS's CoreDNS add-on Corefile, which ends without a newline. */
const EKS = `.:53 {
    errors
    health {
        lameduck 5s
      }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
      pods insecure
      fallthrough in-addr.arpa ip6.arpa
    }
    prometheus :9153
    forward . /etc/resolv.conf
    cache 30
    loop
    reload
    loadbalance
}`;

const ZONES = ["a9s-instances.svc.cluster.local", "service.dc1.consul"];
const SERVER = "10.96.0.53";

describe("instance names: stub zones in the cluster's Corefile", () => {
  it("writes one marked server block forwarding the zones to the names server", () => {
    assert.equal(
      stubZonesSection(["A9S-Instances.svc.cluster.local.", "service.dc1.consul"], "[fd00::53]:53"),
      `${BEGIN_MARKER}\na9s-instances.svc.cluster.local service.dc1.consul {\n    errors\n    cache 5\n` +
        `    forward . [fd00::53]:53\n}\n${END_MARKER}\n`,
    );
    assert.throws(() => stubZonesSection(["bad zone"], SERVER), /zone "bad zone" is not a valid DNS name/);
    assert.throws(() => stubZonesSection(ZONES, "names.default.svc"), /serverAddress "names\.default\.svc"/);
  });

  it("takes the names server's address as an IP, with a port or dns://, never a host name", () => {
    for (const ok of [
      "10.96.0.53",
      "10.96.0.53:53",
      "dns://10.96.0.53:1053",
      "fd00::53",
      "[fd00::53]:53",
      "::ffff:10.0.0.1",
    ])
      assert.equal(serverAddressProblem(ok), undefined, ok);
    for (const bad of [
      "",
      "names",
      "10.96.0.256",
      "10.96.0.53:0",
      "10.96.0.53:70000",
      "fd00::53:53::1",
      "1.2.3.4 {",
    ])
      assert.match(
        serverAddressProblem(bad) ?? "",
        /is not an IP address with an optional port.*names server's ClusterIP/,
        bad,
      );
  });

  for (const [name, original] of [
    ["kubeadm's", KUBEADM],
    ["EKS's (no final newline)", EKS],
    ["the local nodes'", localCorefile("cluster.local")],
    ["an empty", ""],
  ] as const) {
    it(`appends to ${name} Corefile after a blank line, and takes it out byte for byte`, () => {
      assert.deepEqual(stubZoneProblems(original, ZONES), []);
      const written = withStubZones(original, ZONES, SERVER);
      if (original !== "")
        assert.ok(written.startsWith(`${original.replace(/\n?$/, "\n")}\n${BEGIN_MARKER}\n`));
      assert.equal(written.endsWith("\n"), original === "" || original.endsWith("\n"));
      assert.equal(withStubZones(written, ZONES, SERVER), written, "idempotent");
      assert.deepEqual(currentStubZones(written), { zones: ZONES, serverAddress: SERVER });
      assert.deepEqual(stubZoneProblems(written, ZONES), [], "its own block is no conflict");
      assert.equal(withoutStubZones(written), original);
      assert.equal(withoutStubZones(original), original, "nothing to take out");
    });
  }

  it("updates the zones in place, keeping what others added around the section", () => {
    const written = withStubZones(KUBEADM, ZONES, SERVER) + "\nexample.org {\n    whoami\n}\n";
    const updated = withStubZones(written, ["service.dc2.consul"], "10.96.0.54");
    assert.equal(
      updated,
      written.replace(/^a9s-.*\{$/m, "service.dc2.consul {").replace(SERVER, "10.96.0.54"),
    );
    assert.deepEqual(currentStubZones(updated), {
      zones: ["service.dc2.consul"],
      serverAddress: "10.96.0.54",
    });
    assert.equal(withoutStubZones(updated), KUBEADM + "\nexample.org {\n    whoami\n}\n");
  });

  it("refuses to guess when the markers do not pair up", () => {
    const written = withStubZones(KUBEADM, ZONES, SERVER);
    const noEnd = written.replace(`${END_MARKER}\n`, "");
    assert.throws(
      () => withoutStubZones(noEnd),
      /markers do not pair up \(begin at line 25, end at line none\)/,
    );
    assert.throws(() => withStubZones(noEnd, ZONES, SERVER), /Klutch will not guess/);
    const twice = written + written.slice(KUBEADM.length);
    assert.match(stubZoneProblems(twice, ZONES).join("\n"), /begin at line 25, 33, end at line 31, 39/);
  });

  it("refuses a zone another server block already declares on port 53, naming the block", () => {
    const consul = `${KUBEADM}\nservice.dc1.consul:53 {\n    forward . 10.0.0.2\n}\n`;
    const [problem, ...rest] = stubZoneProblems(consul, ZONES);
    assert.deepEqual(rest, []);
    assert.match(
      problem!,
      /zone "service\.dc1\.consul" is already declared by .* "service\.dc1\.consul:53" at line 25/,
    );
    assert.match(
      problem!,
      /leave "service\.dc1\.consul" out of the instance-name zones, or remove that server block/,
    );
    for (const key of ["dns://Service.DC1.consul.", "other.org, service.dc1.consul"])
      assert.equal(stubZoneProblems(`${key} {\n    whoami\n}\n`, ZONES).length, 1, key);
    // Another port, another transport, a comment or a parent zone: no conflict.
    for (const text of [
      "service.dc1.consul:5353 {\n}\n",
      "tls://service.dc1.consul {\n}\n",
      "# service.dc1.consul {\n",
      "consul {\n    forward . 10.0.0.2\n}\n",
    ])
      assert.deepEqual(stubZoneProblems(text, ZONES), [], text);
  });

  it("refuses zones that are bad, repeated, the root, or the cluster's own names", () => {
    const problems = (zones: string[]) => stubZoneProblems(KUBEADM, zones).join("\n");
    assert.match(problems([]), /zones is empty; name at least one zone/);
    assert.match(problems(["."]), /zone "\." is the root zone/);
    assert.match(
      problems(["a..b", "-x.org"]),
      /"a\.\.b" is not a valid DNS name[^]*"-x\.org" is not a valid/,
    );
    assert.match(problems(["x.org", "X.org."]), /zone "X\.org\." is named twice/);
    for (const zone of ["cluster.local", "local", "svc.cluster.local", "arpa"])
      assert.match(
        problems([zone]),
        new RegExp(`zone "${zone}" would take the names the kubernetes plugin serves`),
      );
  });

  it("refuses a Corefile it could not extend: unbalanced braces, a block without braces", () => {
    assert.match(stubZoneProblems(KUBEADM.slice(0, -2), ZONES)[0]!, /block opened at line 1 is never closed/);
    assert.match(stubZoneProblems(`${KUBEADM}}\n`, ZONES)[0]!, /a \} at line 24 closes nothing/);
    assert.match(stubZoneProblems(".:53\nwhoami\n", ZONES)[0]!, /text outside any server block at line 1/);
    const imports = `import custom/*.override\n${KUBEADM}(snippet) {\n    errors\n}\n`;
    assert.deepEqual(stubZoneProblems(imports, ZONES), []);
    assert.deepEqual(stubZoneProblems('"quoted {" {\n    whoami # a } comment\n}\n', ZONES), []);
  });
});
