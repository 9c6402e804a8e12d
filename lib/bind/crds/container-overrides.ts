import {
  arrayOf,
  bool,
  int32,
  int64,
  intOrString,
  mapOf,
  obj,
  quantity,
  str,
  type Schema,
} from "./schema-builders";

/**
 * AppClusterBinding's ContainerOverrides: a strategic-merge patch for the konnector
 * container, with the corev1.Container fields it mirrors (k8s.io/api v0.32, the version
 * klutchio builds against). Typed in full so a misspelt field is refused, not dropped.
 */

const stringList = (): Schema => arrayOf(str(), { "x-kubernetes-list-type": "atomic" });

/** Secret/ConfigMap key selectors and references are atomic maps: replaced, never merged. */
const atomic = { "x-kubernetes-map-type": "atomic" } as const;

const keySelector = (): Schema =>
  obj({ key: str(), name: str({ default: "" }), optional: bool() }, ["key"], atomic);

const envVar = (): Schema =>
  obj(
    {
      name: str(),
      value: str(),
      valueFrom: obj({
        configMapKeyRef: keySelector(),
        secretKeyRef: keySelector(),
        fieldRef: obj({ apiVersion: str(), fieldPath: str() }, ["fieldPath"], atomic),
        resourceFieldRef: obj(
          { containerName: str(), divisor: quantity(), resource: str() },
          ["resource"],
          atomic,
        ),
      }),
    },
    ["name"],
  );

const envFromSource = (): Schema =>
  obj({
    prefix: str(),
    configMapRef: obj({ name: str({ default: "" }), optional: bool() }, [], atomic),
    secretRef: obj({ name: str({ default: "" }), optional: bool() }, [], atomic),
  });

const containerPort = (): Schema =>
  obj(
    {
      containerPort: int32(),
      hostIP: str(),
      hostPort: int32(),
      name: str(),
      protocol: str({ default: "TCP" }),
    },
    ["containerPort"],
  );

const resources = (): Schema =>
  obj({
    claims: arrayOf(obj({ name: str(), request: str() }, ["name"]), {
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
    }),
    limits: mapOf(quantity()),
    requests: mapOf(quantity()),
  });

const httpGet = (): Schema =>
  obj(
    {
      host: str(),
      httpHeaders: arrayOf(obj({ name: str(), value: str() }, ["name", "value"]), {
        "x-kubernetes-list-type": "atomic",
      }),
      path: str(),
      port: intOrString(),
      scheme: str(),
    },
    ["port"],
  );

const tcpSocket = (): Schema => obj({ host: str(), port: intOrString() }, ["port"]);
const exec = (): Schema => obj({ command: stringList() });

const probe = (): Schema =>
  obj({
    exec: exec(),
    httpGet: httpGet(),
    tcpSocket: tcpSocket(),
    grpc: obj({ port: int32(), service: str({ default: "" }) }, ["port"]),
    initialDelaySeconds: int32(),
    timeoutSeconds: int32(),
    periodSeconds: int32(),
    successThreshold: int32(),
    failureThreshold: int32(),
    terminationGracePeriodSeconds: int64(),
  });

const lifecycleHandler = (): Schema =>
  obj({
    exec: exec(),
    httpGet: httpGet(),
    tcpSocket: tcpSocket(),
    sleep: obj({ seconds: int64() }, ["seconds"]),
  });

const profile = (): Schema => obj({ type: str(), localhostProfile: str() }, ["type"]);

const securityContext = (): Schema =>
  obj({
    allowPrivilegeEscalation: bool(),
    appArmorProfile: profile(),
    capabilities: obj({ add: stringList(), drop: stringList() }),
    privileged: bool(),
    procMount: str(),
    readOnlyRootFilesystem: bool(),
    runAsGroup: int64(),
    runAsNonRoot: bool(),
    runAsUser: int64(),
    seLinuxOptions: obj({ level: str(), role: str(), type: str(), user: str() }),
    seccompProfile: profile(),
    windowsOptions: obj({
      gmsaCredentialSpec: str(),
      gmsaCredentialSpecName: str(),
      hostProcess: bool(),
      runAsUserName: str(),
    }),
  });

export function containerOverrides(): Schema {
  return obj(
    {
      name: str(),
      image: str(),
      command: stringList(),
      args: stringList(),
      workingDir: str(),
      ports: arrayOf(containerPort(), {
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
      }),
      envFrom: arrayOf(envFromSource(), { "x-kubernetes-list-type": "atomic" }),
      env: arrayOf(envVar()),
      resources: resources(),
      restartPolicy: str(),
      volumeMounts: arrayOf(
        obj(
          {
            mountPath: str(),
            mountPropagation: str(),
            name: str(),
            readOnly: bool(),
            recursiveReadOnly: str(),
            subPath: str(),
            subPathExpr: str(),
          },
          ["name", "mountPath"],
        ),
      ),
      volumeDevices: arrayOf(obj({ devicePath: str(), name: str() }, ["name", "devicePath"])),
      livenessProbe: probe(),
      readinessProbe: probe(),
      startupProbe: probe(),
      lifecycle: obj({ postStart: lifecycleHandler(), preStop: lifecycleHandler() }),
      terminationMessagePath: str(),
      terminationMessagePolicy: str(),
      imagePullPolicy: str(),
      securityContext: securityContext(),
      stdin: bool(),
      stdinOnce: bool(),
      tty: bool(),
    },
    [],
    { description: "Fields strategically merged into the konnector container (corev1.Container)." },
  );
}
