import { NFT_TABLE } from "./render-nftables";

/**
 * WireGuard on clusters (the bridge's `kubernetes` target): how the bridge tells the tunnel's
 * pods which connections exist, without credentials for any app cluster. Pure.
 *
 * The bridge publishes, per group (one consumer namespace, i.e. one app cluster's client),
 * two keys in the gateway's flows ConfigMap on the control plane, by server-side apply with a
 * field manager of its own, so groups never touch each other's keys:
 *
 * - `flows-<client address>.nft`: `add element` lines for the gateway filter's `flows` and
 *   `services` sets; the gateway's rules file includes every such file in the same `nft -f`
 *   transaction that redefines the table, so a reload never drops another group's flows.
 * - `client-<client address>.conf`: the client's forwarder list, one line per connection,
 *   `forward <listen port> <instance host> <instance port>`.
 *
 * The client pod fetches its list from the gateway through the tunnel (a small socat server
 * on the gateway's tunnel address, CONFIG_PORT), which serves `client-<peer address>.conf`.
 * WireGuard's cryptokey routing is what makes that safe: the gateway accepts a packet from a
 * peer only with that peer's own tunnel address as its source, so each client can read its
 * own list and nobody else's. The client then runs one socat per line and routes exactly the
 * listed hosts into the tunnel; the gateway's filter still admits only the published flows,
 * whatever a client does with its own config.
 */

/** Where the gateway serves each client its forwarder list (TCP, on its tunnel address). */
export const DEFAULT_CONFIG_PORT = 51821;
/** Where the gateway pod mounts the flows ConfigMap. */
export const FLOWS_DIR = "/etc/klutch/flows";
/** The files the gateway's rules include. */
export const FLOWS_INCLUDE = `${FLOWS_DIR}/flows-*.nft`;
/** Where the client's two containers share the hosts the forwarders dial (an emptyDir). */
export const CLIENT_SHARED_DIR = "/run/klutch";
/**
 * The agent's count of list fetches in a row that failed (0 after one that worked), in the
 * shared directory: the tunnel container's sign that the gateway stopped answering.
 */
export const UNREACHED_FILE = "unreached";
/**
 * How long a fetch waits for the gateway's answer. Through a working tunnel the list server
 * answers in one round trip; a longer wait only delays noticing a dead session.
 */
const FETCH_TIMEOUT_SECONDS = 2;

export interface PublishedForwarder {
  listenPort: number;
  host: string;
  port: number;
}

export function flowsKey(clientAddress: string): string {
  return `flows-${clientAddress}.nft`;
}

export function clientConfigKey(clientAddress: string): string {
  return `client-${clientAddress}.conf`;
}

/** The group's gateway flows as nft `add element` lines (none when the group serves nothing). */
export function renderFlowsNft(group: string, flows: readonly string[], services: readonly string[]): string {
  const lines = [`# klutch bridge, group ${group}: flows of its client`];
  if (flows.length > 0) lines.push(`add element inet ${NFT_TABLE} flows { ${flows.join(", ")} }`);
  if (services.length > 0) lines.push(`add element inet ${NFT_TABLE} services { ${services.join(", ")} }`);
  return `${lines.join("\n")}\n`;
}

/** The client's forwarder list, sorted by listen port so equal lists give equal bytes. */
export function renderClientConfig(group: string, forwarders: readonly PublishedForwarder[]): string {
  const lines = [`# klutch bridge, group ${group}: forward <listen port> <host> <port>`];
  for (const f of [...forwarders].sort((a, b) => a.listenPort - b.listenPort))
    lines.push(`forward ${f.listenPort} ${f.host} ${f.port}`);
  return `${lines.join("\n")}\n`;
}

const PORT = /^\d{1,5}$/;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * Reads a forwarder list (a ConfigMap key's content) the way the client's agent does
 * (clientAgentScript checks the same shape in shell): comments and blank lines skipped,
 * anything else malformed rejects the whole list, so a client never acts on half of one. On
 * the wire the list server appends a closing `end` line (configServerArgs), which the agent
 * requires and this content does not hold.
 */
export function parseClientConfig(text: string): PublishedForwarder[] {
  const out: PublishedForwarder[] = [];
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [kind, listen, host, port, ...rest] = line.split(/\s+/);
    const ok =
      kind === "forward" &&
      rest.length === 0 &&
      PORT.test(listen ?? "") &&
      PORT.test(port ?? "") &&
      IPV4.test(host ?? "");
    if (!ok)
      throw new Error(
        `forwarder list line ${i + 1} ${JSON.stringify(raw)} is not "forward <port> <ipv4> <port>"`,
      );
    out.push({ listenPort: Number(listen), host: host as string, port: Number(port) });
  }
  return out;
}

/**
 * The client's agent (the forwarder container, as nobody, no capability): every 3 s it
 * fetches its list from the gateway through the tunnel, checks every line (a malformed list is
 * ignored whole, and so is an answer without the server's closing `end`: a connection cut short
 * must not stop every forwarder), stops the forwarders no longer listed, shares the listed hosts with the
 * tunnel container, and starts the missing forwarders whose hosts that container has routed
 * into the tunnel (its `routed` file). It also writes how many fetches in a row failed
 * (UNREACHED_FILE), which the tunnel container acts on. Only shell built-ins, cat, socat and sleep, so
 * the same script runs on the local image (dash) and on alpine/socat (busybox sh).
 */
export function clientAgentScript(
  gatewayAddress: string,
  configPort: number,
  dirs: { tmp: string; shared: string } = { tmp: "/tmp", shared: CLIENT_SHARED_DIR },
): string {
  return [
    "set -u",
    // The container's first process: the kernel gives it no default action for SIGTERM, so
    // without a handler the kubelet's stop waited out the grace period (30 s in every teardown
    // of a client pod). Its forwarders go with the container's PID namespace.
    "trap 'exit 0' TERM INT",
    `gw=${gatewayAddress}`,
    `cfgport=${configPort}`,
    `conf=${dirs.tmp}/forwarders.conf`,
    `state=${dirs.tmp}/forwarders.state`,
    `fetcherr=${dirs.tmp}/fetch.err`,
    `unreached=${dirs.shared}/${UNREACHED_FILE}`,
    ': > "$state"',
    'lasterr=""',
    "failed=0",
    'echo 0 > "$unreached"',
    // 0: a complete, well-formed list; 1: malformed; 2: cut short (no `end`, which the list
    // server sends last), so the connection ended early and the last good list stays.
    "valid() {",
    '  ended=""',
    "  while read -r kind lport host port rest; do",
    '    [ -z "$ended" ] || return 1',
    '    case "$kind" in "" | "#"*) continue ;; end) ended=1; continue ;; forward) ;; *) return 1 ;; esac',
    '    [ -z "$rest" ] || return 1',
    '    case "$lport" in "" | *[!0-9]*) return 1 ;; esac',
    '    case "$port" in "" | *[!0-9]*) return 1 ;; esac',
    '    case "$host" in "" | *[!0-9.]*) return 1 ;; esac',
    '  done < "$1"',
    '  [ -n "$ended" ] || return 2',
    "}",
    "while true; do",
    `  if socat -u "TCP:$gw:$cfgport,connect-timeout=${FETCH_TIMEOUT_SECONDS}" - > "$conf.new" 2> "$fetcherr"; then`,
    '    lasterr=""',
    '    [ "$failed" = 0 ] || { failed=0; echo 0 > "$unreached"; }',
    '    valid "$conf.new"',
    "    case $? in",
    '      0) cat "$conf.new" > "$conf" ;;',
    '      2) echo "an incomplete forwarder list from $gw:$cfgport (the connection ended early): keeping the last one" >&2 ;;',
    '      *) echo "ignoring a malformed forwarder list from $gw:$cfgport" >&2 ;;',
    "    esac",
    "  else",
    '    err="$(cat "$fetcherr")"',
    '    [ "$err" = "$lasterr" ] || echo "cannot fetch the forwarder list from $gw:$cfgport (the tunnel is not up yet?): $err" >&2',
    '    lasterr="$err"',
    // Counted for the tunnel container, which drops a session the gateway no longer answers.
    "    failed=$((failed + 1))",
    '    echo "$failed" > "$unreached"',
    "  fi",
    '  if [ -f "$conf" ]; then',
    // Stop what is no longer listed (or whose process died) before starting anything, so a
    // port that changes target is free when its new forwarder binds it.
    '    kept=""',
    "    while read -r sport spid sspec; do",
    '      listed=""',
    "      while read -r kind lport host port; do",
    '        [ "$kind" = forward ] && [ "$lport" = "$sport" ] && [ "$host:$port" = "$sspec" ] && listed=1',
    '      done < "$conf"',
    '      if [ -n "$listed" ] && kill -0 "$spid" 2> /dev/null; then',
    '        kept="$kept$sport $spid $sspec',
    '"',
    "      else",
    '        kill "$spid" 2> /dev/null && echo "forwarder :$sport -> $sspec stopped"',
    "      fi",
    '    done < "$state"',
    '    printf "%s" "$kept" > "$state"',
    // The hosts go to the tunnel container first; a forwarder starts only once its host is
    // routed into the tunnel, so no connection ever leaves by the pod's default route.
    '    hosts=""',
    "    while read -r kind lport host port; do",
    '      [ "$kind" = forward ] && hosts="$hosts $host"',
    '    done < "$conf"',
    `    printf "%s\\nend\\n" "$hosts" > ${dirs.shared}/hosts`,
    `    routed="$(cat ${dirs.shared}/routed 2> /dev/null)"`,
    "    while read -r kind lport host port; do",
    '      [ "$kind" = forward ] || continue',
    '      case " $routed " in *" $host "*) ;; *) continue ;; esac',
    '      running=""',
    '      while read -r sport spid sspec; do [ "$sport" = "$lport" ] && running=1; done < "$state"',
    '      [ -z "$running" ] || continue',
    '      socat "TCP-LISTEN:$lport,fork,reuseaddr" "TCP:$host:$port,connect-timeout=5" &',
    '      echo "$lport $! $host:$port" >> "$state"',
    '      echo "forwarder :$lport -> $host:$port started"',
    '    done < "$conf"',
    "  fi",
    // wait reaps every exited child, so `kill -0` never mistakes a dead forwarder for a live one.
    "  sleep 3 & wait $!",
    "done",
  ].join("\n");
}

/**
 * Drops the client's session with the gateway and adds the gateway peer again from the
 * interface's own configuration, `$peer` being the gateway's public key. WireGuard has no
 * message for "I lost your session": a gateway pod started anew silently drops the packets of
 * the old one, and the client begins a new handshake only after 15 s of unanswered data
 * (KEEPALIVE_TIMEOUT + REKEY_TIMEOUT, wireguard-go device/constants.go; the kernel's
 * timers.c alike). A peer added afresh has no session, and with a persistent keepalive it
 * sends one at once (wireguard-go device/uapi.go, `persistent_keepalive_interval` on a
 * running device; the kernel's netlink.c alike), which starts the handshake. Open TCP
 * connections through the tunnel survive: their state is at their ends, not in WireGuard.
 */
export function sessionResetScript(iface: string, strippedConfig: string): string {
  // The configuration is read before the peer goes: an empty one would make syncconf remove
  // every peer.
  return `cfg="$(${strippedConfig})" && [ -n "$cfg" ] && wg set ${iface} peer "$peer" remove && printf '%s\\n' "$cfg" | wg syncconf ${iface} /dev/stdin`;
}

/**
 * The client's tunnel container (root, CAP_NET_ADMIN): wg-quick up, then every second
 * - when the agent's fetches through the tunnel have failed once more (UNREACHED_FILE), the
 *   gateway session is dropped and the peer added again (sessionResetScript), so a gateway pod
 *   started anew is reached within a fetch's timeout instead of WireGuard's 15 s; a reset on a
 *   session that was fine costs one handshake;
 * - the hosts the agent shares become the gateway peer's AllowedIPs (the planned ones plus
 *   those) and routes into wg0; hosts no longer listed lose their route. The file is the
 *   agent's, a less privileged container's, so each host is checked again before it reaches
 *   `wg` or `ip`.
 */
export const CLIENT_TUNNEL_SCRIPT = [
  "set -eu",
  "install -m 0600 /etc/klutch/wireguard/wg0.conf /etc/wireguard/wg0.conf",
  "wg-quick up wg0",
  "trap 'wg-quick down wg0; exit 0' TERM INT",
  'peer="$(wg show wg0 peers)"',
  'planned="$(wg show wg0 allowed-ips | { read -r p ips; echo "$ips"; })"',
  'last=""',
  'allowed=""',
  "seen=0",
  "while true; do",
  "  sleep 1 & wait $!",
  `  failed="$(cat ${CLIENT_SHARED_DIR}/${UNREACHED_FILE} 2> /dev/null || echo 0)"`,
  '  case "$failed" in "" | *[!0-9]*) failed="$seen" ;; esac',
  '  if [ "$failed" != "$seen" ]; then',
  '    seen="$failed"',
  '    if [ "$failed" != 0 ]; then',
  `      if ${sessionResetScript("wg0", "wg-quick strip wg0")} && { [ -z "$allowed" ] || wg set wg0 peer "$peer" allowed-ips "$allowed"; }; then`,
  // Said on the first and every tenth: a gateway down for long resets every few seconds.
  '        case "$failed" in 1 | *0) echo "the gateway did not answer the agent ($failed fetches in a row): the session is dropped, the next packet shakes hands anew" ;; esac',
  "      else",
  '        echo "could not drop the session with the gateway" >&2',
  "      fi",
  "    fi",
  "  fi",
  `  [ -f ${CLIENT_SHARED_DIR}/hosts ] || continue`,
  `  text="$(cat ${CLIENT_SHARED_DIR}/hosts)"`,
  '  case "$text" in *end) ;; *) continue ;; esac',
  '  hosts=""',
  '  plain=""',
  '  for h in ${text%end}; do case "$h" in *[!0-9.]*) ;; *) hosts="$hosts $h/32" plain="$plain $h" ;; esac; done',
  '  [ "$hosts" != "$last" ] || continue',
  '  allowed=""',
  '  for a in $planned $hosts; do allowed="${allowed:+$allowed,}$a"; done',
  '  if wg set wg0 peer "$peer" allowed-ips "$allowed"; then',
  '    for h in $hosts; do ip route replace "$h" dev wg0 || true; done',
  '    for h in $last; do case " $hosts $planned " in *" $h "*) ;; *) ip route del "$h" dev wg0 2> /dev/null || true ;; esac; done',
  '    last="$hosts"',
  // What is routed now: the agent starts a host's forwarders only once it is listed here.
  `    printf "%s\\n" "$plain" > ${CLIENT_SHARED_DIR}/routed`,
  '    echo "tunnel routes:${hosts:- none}"',
  "  fi",
  "done",
].join("\n");

/**
 * The gateway's forwarder-list server (a container of its own, as nobody): each connection
 * gets `client-<its peer address>.conf` from the flows ConfigMap, or nothing. The address is
 * the kernel's, from a tunnel that admits each peer only with its own source address.
 */
export function configServerArgs(configPort: number, dir = FLOWS_DIR): string[] {
  return [
    `TCP-LISTEN:${configPort},fork,reuseaddr`,
    // No comma or colon in the command: socat's address syntax would split it there. `end`
    // comes last whether or not the peer has a list (none: no forwarders), so a client tells a
    // complete answer from a connection cut short, which must not stop its forwarders.
    `SYSTEM:cat ${dir}/client-$SOCAT_PEERADDR.conf 2>/dev/null; echo end`,
  ];
}
