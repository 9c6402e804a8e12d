/**
 * The proxy pods' image when no setting names one (pinned): TcpProxy's default, and what
 * `klutch:imageRegistry` moves to a mirror (components/config/images.ts).
 */
export const DEFAULT_HAPROXY_IMAGE = "docker.io/library/haproxy:2.6.12";
