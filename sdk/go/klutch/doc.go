// Klutch (Crossplane + klutch-bind multi-cluster data services) components: the whole environment, clusters, Crossplane, the bind backend, OIDC, exported APIs, app cluster bindings and the network paths (TCP proxy, WireGuard, AWS VPC peering, OpenStack routing).
package klutch
