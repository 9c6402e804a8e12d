import { strict as assert } from "node:assert";
import { hostsFile, inZones, isIPv4, normaliseZone, recordsOf, type ClaimLike } from "./records";

const ZONES = ["a9s-instances.svc.cluster.local"];

/** A ServiceBinding claim as the konnector copies it into the app cluster, with instance names. */
function claim(
  namespace: string,
  name: string,
  created: string,
  instanceNames: unknown,
): ClaimLike & { apiVersion: string; kind: string } {
  return {
    apiVersion: "anynines.com/v1",
    kind: "ServiceBinding",
    metadata: { namespace, name, creationTimestamp: created, uid: `${namespace}-${name}-uid` },
    status: { managed: { secret: { name: `${name}-service-binding` }, instanceNames } },
  };
}

describe("instance names: zones", () => {
  it("normalises a zone: lowercase, no trailing dot", () => {
    assert.equal(normaliseZone("A9S-Instances.svc.Cluster.Local."), "a9s-instances.svc.cluster.local");
  });

  it("takes a zone itself and names below it, ignoring case and the trailing dot; not a suffix inside a label", () => {
    assert.ok(inZones("pg-0.a9s-instances.svc.cluster.local", ZONES));
    assert.ok(inZones("PG-0.A9S-Instances.svc.cluster.local.", ["a9s-instances.svc.cluster.local."]));
    assert.ok(inZones("a9s-instances.svc.cluster.local", ZONES));
    assert.ok(!inZones("evil-a9s-instances.svc.cluster.local", ZONES));
    assert.ok(!inZones("kubernetes.default.svc.cluster.local", ZONES));
    assert.ok(!inZones("pg-0.a9s-instances.svc.cluster.local", []));
  });

  it("tells a dotted-quad IPv4 address", () => {
    assert.ok(isIPv4("10.96.0.10"));
    for (const no of ["10.0.0.256", "010.0.0.1", "10.0.0", "::1", "lb.example.com"])
      assert.ok(!isIPv4(no), no);
  });
});

describe("instance names: records from the claims", () => {
  it("reads each claim's names, lowercased, sorted by name, with the claim that named them", () => {
    const { records, problems } = recordsOf(
      [
        claim("team-b", "orders-db", "2026-03-02T10:00:00Z", [
          { name: "PG-1.a9s-instances.svc.cluster.local.", address: "172.18.0.5" },
        ]),
        claim("team-a", "app-db", "2026-03-01T10:00:00Z", [
          {
            name: "pg-0.a9s-instances.svc.cluster.local",
            address: "k8s-klutch-abc123.elb.eu-central-1.amazonaws.com",
          },
          { name: "pg-0.a9s-instances.svc.cluster.local", address: "172.18.0.4" },
        ]),
        { metadata: { namespace: "team-c", name: "pending" } },
      ],
      ZONES,
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(records, [
      { name: "pg-0.a9s-instances.svc.cluster.local", address: "172.18.0.4", claim: "team-a/app-db" },
      {
        name: "pg-0.a9s-instances.svc.cluster.local",
        address: "k8s-klutch-abc123.elb.eu-central-1.amazonaws.com",
        claim: "team-a/app-db",
      },
      { name: "pg-1.a9s-instances.svc.cluster.local", address: "172.18.0.5", claim: "team-b/orders-db" },
    ]);
  });

  it("never serves a name outside the zones: kubernetes.default.svc or a public name is refused with a problem", () => {
    const { records, problems } = recordsOf(
      [
        claim("team-a", "app-db", "2026-03-01T10:00:00Z", [
          { name: "kubernetes.default.svc", address: "10.0.0.66" },
          { name: "api.github.com", address: "10.0.0.66" },
        ]),
      ],
      ZONES,
    );
    assert.deepEqual(records, []);
    assert.deepEqual(problems, [
      'claim team-a/app-db: status.managed.instanceNames[0].name "kubernetes.default.svc" is outside the zones served (a9s-instances.svc.cluster.local); ignored: only names in a --zone are answered',
      'claim team-a/app-db: status.managed.instanceNames[1].name "api.github.com" is outside the zones served (a9s-instances.svc.cluster.local); ignored: only names in a --zone are answered',
    ]);
  });

  it("refuses what is not a DNS name, an address neither IPv4 nor a host name, an address in the zones, and any other shape", () => {
    const { records, problems } = recordsOf(
      [
        claim("team-a", "app-db", "2026-03-01T10:00:00Z", [
          { name: "*.a9s-instances.svc.cluster.local", address: "10.0.0.1" },
          { name: "pg-0.a9s-instances.svc.cluster.local\n10.6.6.6 x", address: "10.0.0.1" },
          { name: "pg-1.a9s-instances.svc.cluster.local", address: "fd00::1" },
          { name: "pg-2.a9s-instances.svc.cluster.local", address: "10.0.0.256" },
          { name: "pg-3.a9s-instances.svc.cluster.local", address: "pg-4.a9s-instances.svc.cluster.local" },
          "pg-5.a9s-instances.svc.cluster.local",
          { name: "pg-6.a9s-instances.svc.cluster.local", address: 10 },
          { name: "pg-7.a9s-instances.svc.cluster.local", address: "10.0.0.7" },
        ]),
        claim("team-b", "odd", "2026-03-01T10:00:00Z", { name: "x" }),
      ],
      ZONES,
    );
    assert.deepEqual(records, [
      { name: "pg-7.a9s-instances.svc.cluster.local", address: "10.0.0.7", claim: "team-a/app-db" },
    ]);
    assert.equal(problems.length, 8);
    assert.ok(
      problems.every((p) => !p.includes("\n")),
      "one line each",
    );
    assert.match(
      problems[0] as string,
      /app-db: status.managed.instanceNames\[0\].name "\*.a9s.*not a DNS name/,
    );
    assert.match(problems[1] as string, /\[1\].name "pg-0.*\\n10.6.6.6 x" is not a DNS name/);
    assert.match(
      problems[2] as string,
      /\[2\].address "fd00::1" \(for pg-1.*\) is neither an IPv4 address nor/,
    );
    assert.match(problems[3] as string, /\[3\].address "10.0.0.256" .* is neither/);
    assert.match(problems[4] as string, /\[4\].address "pg-4.*" .* inside the zones served/);
    assert.match(problems[5] as string, /\[5\] is "pg-5.*": needs a string name and address/);
    assert.match(problems[6] as string, /\[6\] is .*"address":10}: needs a string name and address/);
    assert.match(
      problems[7] as string,
      /team-b\/odd: status.managed.instanceNames is {"name":"x"}, not a list/,
    );
  });

  it("gives a name two claims disagree about to the older claim; the younger gets a problem naming both", () => {
    const pg0 = "pg-0.a9s-instances.svc.cluster.local";
    const claims = [
      claim("team-z", "newer", "2026-03-05T10:00:00Z", [{ name: pg0, address: "10.6.6.6" }]),
      claim("team-b", "same", "2026-03-04T10:00:00Z", [{ name: pg0, address: "172.18.0.4" }]),
      claim("team-a", "oldest", "2026-03-01T10:00:00Z", [{ name: pg0, address: "172.18.0.4" }]),
      // The same time: namespace/name decides, so the outcome never depends on the list's order.
      claim("team-y", "tie", "2026-03-05T10:00:00Z", [{ name: pg0, address: "10.7.7.7" }]),
    ];
    const { records, problems } = recordsOf(claims, ZONES);
    assert.deepEqual(records, [{ name: pg0, address: "172.18.0.4", claim: "team-a/oldest" }]);
    assert.deepEqual(problems, [
      `claim team-y/tie: status.managed.instanceNames names ${pg0} at 10.7.7.7, but the older claim team-a/oldest has it at 172.18.0.4; ignored: the older claim keeps the name`,
      `claim team-z/newer: status.managed.instanceNames names ${pg0} at 10.6.6.6, but the older claim team-a/oldest has it at 172.18.0.4; ignored: the older claim keeps the name`,
    ]);
    assert.deepEqual(recordsOf([...claims].reverse(), ZONES), { records, problems });
  });
});

describe("instance names: the hosts file", () => {
  it("writes one line per address, sorted by name then address, under a header", () => {
    const text = hostsFile([
      { name: "pg-1.a9s-instances.svc.cluster.local", ipv4: ["172.18.0.5"] },
      { name: "pg-0.a9s-instances.svc.cluster.local", ipv4: ["10.0.0.10", "10.0.0.9", "10.0.0.9"] },
      { name: "pg-2.a9s-instances.svc.cluster.local", ipv4: [] },
    ]);
    const [header, ...lines] = text.trimEnd().split("\n");
    assert.match(header as string, /^# /);
    assert.deepEqual(lines, [
      "10.0.0.9 pg-0.a9s-instances.svc.cluster.local",
      "10.0.0.10 pg-0.a9s-instances.svc.cluster.local",
      "172.18.0.5 pg-1.a9s-instances.svc.cluster.local",
    ]);
    assert.ok(text.endsWith("\n"));
  });

  it("is only the header without names, and refuses a line that could write another", () => {
    assert.equal(hostsFile([]).split("\n").filter(Boolean).length, 1);
    assert.match(hostsFile([]), /^# [^\n]*\n$/);
    assert.throws(() => hostsFile([{ name: "a.b\n1.2.3.4 c", ipv4: ["1.1.1.1"] }]), /not a DNS name/);
    assert.throws(() => hostsFile([{ name: "a.b", ipv4: ["1.1.1.1 c"] }]), /not an IPv4 address/);
  });
});
