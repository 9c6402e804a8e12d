import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { AppClusterBinding } from "../../../components/bind/app-cluster-binding";
import { KlutchBindBackend } from "../../../components/bind/bind-backend";
import { OidcProvider } from "../../../components/bind/oidc-provider";
import { apiObjectName, consumerNamespace } from "../../../lib/bind/app-cluster-plan";
import { backendUrls } from "../../../lib/bind/backend-plan";
import { clusterEndpoint } from "../../../lib/bind/cluster-endpoint";
import { type BindRelease, DEFAULT_BIND_RELEASE, releaseImages } from "../../../lib/bind/upstream/release";
import { type ExportedApiConfig, bind, exportedApi, oidc } from "../../../lib/config/schema";
import { checkBindBackend, cookieKeyProblem } from "../../../components/config/validate";
import { DNS_LABEL, DNS_LABEL_RULE } from "../../../lib/net/dns";
import { UNKNOWN } from "../../../providers/kit/schema-model";
import {
  type Args,
  type Constructor,
  clusterProvider,
  given,
  refuse,
  zodProblems,
} from "../../../providers/kit/construct";

/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument */
// Inputs arrive checked against programs/klutch-provider/catalog.ts (provider.ts); see providers/kit/construct.ts.

/**
 * The schema's API (flat claims {group, resource, version, owner}) as the config model's
 * exported API ({..., selector: {owner}}), checked by the config model's own schema.
 */
export function apiConfig(api: Args, field: string): { data?: ExportedApiConfig; problems: string[] } {
  return zodProblems(exportedApi, apiRaw(api), (p) => (field ? `${field}.${p}` : p));
}

/** The schema's API as the config model's raw exported API (claims' owner under selector). */
export function apiRaw(api: Args): Args {
  return {
    group: api.group,
    version: api.version,
    resource: api.resource,
    ...(api.kind !== undefined ? { kind: api.kind } : {}),
    permissionClaims: ((api.permissionClaims ?? []) as Args[]).map(({ owner, ...claim }) => ({
      ...claim,
      ...(owner ? { selector: { owner } } : {}),
    })),
  };
}

function apiConfigs(apis: Args[], field: string): { data: ExportedApiConfig[]; problems: string[] } {
  const parsed = apis.map((a, i) => apiConfig(a, `${field}[${i}]`));
  return {
    data: parsed.flatMap((p) => (p.data ? [p.data] : [])),
    problems: parsed.flatMap((p) => p.problems),
  };
}

/** A secret input's value when it is known and given; never echoed in a message. */
function knownSecret(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * The API address and CA of a cluster for konnectors: the inputs when given, else the
 * kubeconfig's server and CA. Those are public facts of the (secret) kubeconfig, so taking
 * them out must not carry its secrecy (as components/environment.ts does).
 */
function apiEndpoint(
  kubeconfig: pulumi.Input<string>,
  address: pulumi.Input<string> | undefined,
  caPem: pulumi.Input<string> | undefined,
): pulumi.Output<{ address: string; caPem: string }> {
  const fromKubeconfig = pulumi.unsecret(pulumi.output(kubeconfig).apply((k) => clusterEndpoint(k)));
  return pulumi
    .all([fromKubeconfig, address, caPem])
    .apply(([e, a, ca]) => ({ address: a ?? e.server, caPem: ca ?? e.caPem ?? "" }));
}

/** A kubeconfig given as text that has no usable context is refused before anything starts. */
function kubeconfigProblem(field: string, value: unknown, needed: boolean): string[] {
  if (!needed || typeof value !== "string") return [];
  try {
    clusterEndpoint(value);
    return [];
  } catch (e) {
    return [
      `${field}: ${(e as Error).message}; pass a kubeconfig whose current context names a cluster with a server`,
    ];
  }
}

const httpsAddress = bind.shape.apiServerAddress.unwrap();

export function backendProblems(values: Args): {
  problems: string[];
  bind?: z.output<typeof bind>;
  apis: ExportedApiConfig[];
} {
  const tls =
    values.tlsSource === "provided"
      ? { source: "provided" }
      : values.tlsSource || values.tlsIssuer || values.tlsIssuerKind
        ? given({
            source: "cert-manager",
            issuer: values.tlsIssuer ?? "letsencrypt",
            issuerKind: values.tlsIssuerKind,
          })
        : undefined;
  const raw = given({
    externalAddress: values.externalAddress,
    version: values.version,
    image: values.image,
    authorizeUrl: values.authorizeUrl,
    namespacePrefix: values.namespacePrefix,
    prettyName: values.prettyName,
    consumerScope: values.consumerScope,
    exposure: values.exposure,
    ingressClassName: values.ingressClassName,
    gatewayClassName: values.gatewayClassName,
    replicas: values.replicas,
    keyRotation: values.keyRotation,
    tls,
    apiServerAddress: typeof values.apiServerAddress === "string" ? values.apiServerAddress : undefined,
  });
  const rename = (p: string) =>
    ({ "tls.source": "tlsSource", "tls.issuer": "tlsIssuer", "tls.issuerKind": "tlsIssuerKind" })[p] ?? p;
  const parsed = zodProblems(bind, raw, rename);
  const problems = [...parsed.problems];
  const apis = apiConfigs((values.exportedApis ?? []) as Args[], "exportedApis");
  checkBindBackend(raw, (at, message) => problems.push(`${at.slice(1).join(".")}: ${message}`), apis.data);
  problems.push(...apis.problems);
  if (values.oidcIssuerUrl !== undefined) {
    const issuer = httpsAddress.safeParse(values.oidcIssuerUrl);
    if (!issuer.success)
      problems.push(
        `oidcIssuerUrl: must be an https URL such as https://login.example.com (got ${JSON.stringify(values.oidcIssuerUrl)})`,
      );
  }
  for (const [field, key] of [
    ["cookieSigningKey", "bindCookieSigningKey"],
    ["cookieEncryptionKey", "bindCookieEncryptionKey"],
  ] as const) {
    const value = knownSecret(values[field]);
    const problem = value && cookieKeyProblem(key, value);
    if (problem) problems.push(`${field}: ${problem}`);
  }
  if (values.tlsSource === "provided") {
    for (const [field, marker] of [
      ["tlsCertificate", "CERTIFICATE"],
      ["tlsKey", "PRIVATE KEY"],
    ] as const) {
      const value = values[field] as unknown;
      if (value === UNKNOWN) continue;
      if (!knownSecret(value)) problems.push(`${field} is required when tlsSource is "provided" (PEM text)`);
      else if (!(value as string).includes("-----BEGIN ") || !(value as string).includes(marker))
        problems.push(`${field}: must be PEM text containing a ${marker} block`);
    }
  }
  problems.push(
    ...kubeconfigProblem(
      "kubeconfig",
      values.kubeconfig,
      values.apiServerAddress === undefined || values.apiServerCaPem === undefined,
    ),
  );
  return { problems, bind: parsed.data, apis: apis.data };
}

/** The config model's OIDC settings from the schema's flat inputs (provider decides the shape). */
export function oidcProblems(values: Args): {
  problems: string[];
  oidc?: z.output<typeof oidc>;
  externalAddress: string;
} {
  const provider = values.provider ?? "dex";
  // Keycloak's shape has no image, storage or connectors: the config model names them if given.
  const raw = given({
    provider,
    issuerUrl: values.issuerUrl,
    clientId: values.clientId,
    image: values.image,
    storageSize: values.storageSize,
    connectors: values.connectors,
  });
  const parsed = zodProblems(oidc, raw);
  const problems = parsed.problems;
  const address = zodProblems(
    bind.pick({ externalAddress: true }),
    given({ externalAddress: values.externalAddress }),
  );
  problems.push(...address.problems);
  if (provider === "keycloak" && values.clientSecret !== UNKNOWN && !knownSecret(values.clientSecret))
    problems.push("clientSecret is required for provider keycloak (the client's secret at Keycloak)");
  if (provider === "dex") {
    if (values.kubeconfig === undefined)
      problems.push("kubeconfig is required for provider dex (the control plane, where Dex runs)");
    if (values.namespace === undefined)
      problems.push("namespace is required for provider dex (where Dex runs; it must exist)");
  }
  return { problems, oidc: parsed.data, externalAddress: address.data?.externalAddress ?? "" };
}

export function bindingProblems(values: Args): { problems: string[]; apis: ExportedApiConfig[] } {
  const problems: string[] = [];
  const app = values.appCluster as string;
  const prefix = (values.namespacePrefix as string | undefined) ?? "cluster";
  if (!DNS_LABEL.test(app)) problems.push(`appCluster "${app}" ${DNS_LABEL_RULE}`);
  if (!DNS_LABEL.test(prefix)) problems.push(`namespacePrefix "${prefix}" ${DNS_LABEL_RULE}`);
  const ns = consumerNamespace(prefix, app);
  if (ns.length > 63)
    problems.push(
      `appCluster makes the consumer namespace "${ns}" (${ns.length} characters; at most 63): shorten the name or namespacePrefix`,
    );
  const apis = apiConfigs((values.apis ?? []) as Args[], "apis");
  problems.push(...apis.problems);
  if (apis.data.length === 0 && apis.problems.length === 0)
    problems.push("apis must name at least one API to bind");
  if (
    typeof values.controlPlaneAddress === "string" &&
    !httpsAddress.safeParse(values.controlPlaneAddress).success
  )
    problems.push(
      `controlPlaneAddress: must be an https URL such as https://cp.example.com:6443 (got ${JSON.stringify(values.controlPlaneAddress)})`,
    );
  problems.push(
    ...kubeconfigProblem(
      "controlPlaneKubeconfig",
      values.controlPlaneKubeconfig,
      values.controlPlaneAddress === undefined || values.controlPlaneCaPem === undefined,
    ),
  );
  return { problems, apis: apis.data };
}

export const bindConstructors: Record<string, Constructor> = {
  "klutch:bind:KlutchBindBackend": (name, args, opts, values) => {
    const checked = backendProblems(values);
    refuse("KlutchBindBackend", name, checked.problems);
    const bindConfig = checked.bind!;
    const issuerUrl = values.oidcIssuerUrl as string | undefined;
    const urls = backendUrls(
      bindConfig,
      issuerUrl ? { provider: "keycloak", issuerUrl, clientId: "unused" } : oidc.parse({ provider: "dex" }),
    );
    const backend = new KlutchBindBackend(
      name,
      {
        provider: clusterProvider(name, args.kubeconfig, opts),
        bind: bindConfig,
        urls,
        exportedApis: checked.apis,
        oidc: {
          clientId: args.oidcClientId,
          clientSecret: args.oidcClientSecret,
          ...(args.dexServiceName !== undefined
            ? { dexService: { name: args.dexServiceName, port: args.dexServicePort ?? 5556 } }
            : {}),
        },
        apiServer: apiEndpoint(args.kubeconfig, args.apiServerAddress, args.apiServerCaPem),
        cookieSigningKey: args.cookieSigningKey,
        cookieEncryptionKey: args.cookieEncryptionKey,
        tls:
          args.tlsCertificate !== undefined && args.tlsKey !== undefined
            ? { certificate: args.tlsCertificate, key: args.tlsKey }
            : undefined,
        createNamespace: args.createNamespace,
        namespace: args.namespace,
        labels: args.labels,
        skipAwait: args.skipAwait,
      },
      opts,
    );
    return {
      resource: backend,
      outputs: {
        namespace: backend.namespace,
        serviceName: backend.serviceName,
        externalAddress: backend.externalAddress,
        crdNames: pulumi.all(backend.crds.map((c) => c.metadata.name)),
      },
    };
  },
  "klutch:bind:OidcProvider": (name, args, opts, values) => {
    const checked = oidcProblems(values);
    refuse("OidcProvider", name, checked.problems);
    const config = checked.oidc!;
    const urls = backendUrls({ externalAddress: checked.externalAddress }, config);
    const provider = new OidcProvider(
      name,
      {
        // Keycloak runs elsewhere: nothing is made on a cluster, so no kubeconfig is needed.
        provider: args.kubeconfig !== undefined ? clusterProvider(name, args.kubeconfig, opts) : undefined,
        namespace: args.namespace,
        oidc: config,
        issuerUrl: urls.issuerUrl,
        callbackUrl: urls.callbackUrl,
        clientName: args.clientName ?? "Klutch",
        clientSecret: args.clientSecret,
        keyRotation: args.keyRotation,
        labels: args.labels,
        skipAwait: args.skipAwait,
      },
      opts,
    );
    return {
      resource: provider,
      outputs: {
        issuerUrl: provider.issuerUrl,
        clientId: provider.clientId,
        clientSecret: provider.clientSecret,
        callbackUrl: urls.callbackUrl,
        ...(provider.service
          ? { serviceName: provider.service.name, servicePort: provider.service.port }
          : {}),
      },
    };
  },
  "klutch:bind:AppClusterBinding": (name, args, opts, values) => {
    const checked = bindingProblems(values);
    refuse("AppClusterBinding", name, checked.problems);
    const release = (args.release ?? DEFAULT_BIND_RELEASE) as BindRelease;
    const binding = new AppClusterBinding(
      name,
      {
        appCluster: args.appCluster,
        controlPlaneProvider: clusterProvider(`${name}-control-plane`, args.controlPlaneKubeconfig, opts),
        controlPlaneKubeconfig: args.controlPlaneKubeconfig,
        appClusterProvider: clusterProvider(`${name}-app-cluster`, args.appClusterKubeconfig, opts),
        namespacePrefix: args.namespacePrefix ?? "cluster",
        prettyName: args.prettyName ?? "Klutch",
        apis: checked.apis,
        controlPlane: apiEndpoint(
          args.controlPlaneKubeconfig,
          args.controlPlaneAddress,
          args.controlPlaneCaPem,
        ),
        release,
        konnectorImage: args.konnectorImage ?? releaseImages(release).konnector,
        awaitExports: args.awaitExports ?? !args.skipAwait,
        createKonnectorNamespace: args.createKonnectorNamespace,
        ...(typeof args.bindSubject === "string" && args.bindSubject
          ? { identity: { subject: args.bindSubject } }
          : {}),
        labels: args.labels,
        skipAwait: args.skipAwait,
      },
      opts,
    );
    return {
      resource: binding,
      outputs: {
        kubeconfig: binding.kubeconfig,
        consumerNamespace: binding.consumerNamespace,
        boundApis: checked.apis.map(apiObjectName),
      },
    };
  },
};
