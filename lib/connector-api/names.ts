/**
 * The network connector API's names, once: the XTCPConnection XRD Klutch specifies
 * (klutch.anynines.com/v1, claim TCPConnection) and the NetworkPath a Pulumi-backed
 * composition composes for each connection (klutch.anynines.com/v1alpha1, cluster-scoped).
 * The XRD, the compositions, the NetworkPath CRD, the bridge's RBAC and its watches all
 * read them from here.
 */

export const CONNECTOR_GROUP = "klutch.anynines.com";
export const CONNECTOR_VERSION = "v1";
export const XR_KIND = "XTCPConnection";
export const CLAIM_KIND = "TCPConnection";
/** The plural of the composite kind, which owns the NetworkPaths. */
export const COMPOSITE_PLURAL = "xtcpconnections";
export const XRD_NAME = `${COMPOSITE_PLURAL}.${CONNECTOR_GROUP}`;

export const NETWORK_PATH_GROUP = CONNECTOR_GROUP;
export const NETWORK_PATH_VERSION = "v1alpha1";
export const NETWORK_PATH_KIND = "NetworkPath";
export const NETWORK_PATH_PLURAL = "networkpaths";
export const NETWORK_PATH_API_VERSION = `${NETWORK_PATH_GROUP}/${NETWORK_PATH_VERSION}`;
export const NETWORK_PATH_CRD_NAME = `${NETWORK_PATH_PLURAL}.${NETWORK_PATH_GROUP}`;
