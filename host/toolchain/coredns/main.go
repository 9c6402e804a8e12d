// Command coredns is CoreDNS (github.com/coredns/coredns, COREDNS_VERSION in
// host/toolchain/versions.env) with only the plugins a local node's cluster DNS uses: the same
// coremain.Run as upstream's coredns.go, which links every plugin through core/plugin (cloud
// DNS backends included). Plugins register themselves on import; the Corefile's directive
// order stays upstream's (core/dnsserver/zdirectives.go). There is deliberately no `forward`:
// names outside the cluster are never sent to another resolver.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func main() { coremain.Run() }
