/** An inclusive range of ports, such as a proxy's `networkConnector.portRange`. */
export interface PortRange {
  from: number;
  to: number;
}
