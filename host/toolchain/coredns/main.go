// Command coredns is CoreDNS (github.com/coredns/coredns, COREDNS_VERSION in
// host/toolchain/versions.env) with only the plugins a local node's cluster DNS uses: the same
// coremain.Run as upstream's coredns.go, which links every plugin through core/plugin (cloud
// DNS backends included). Plugins register themselves on import; the Corefile's directive
// order stays upstream's (core/dnsserver/zdirectives.go). `hosts` serves the instance-names
// server's file (components/instance-names/names-server.ts); `forward` serves only the stub zone
// the environment adds for those names (lib/instance-names/corefile.ts), to that server's
// ClusterIP in the same cluster. The cluster's own block forwards nothing: names outside the
// cluster are never sent to another resolver.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func main() { coremain.Run() }
