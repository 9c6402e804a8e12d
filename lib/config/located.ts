/** Where a setting sits in the stack config, e.g. ["appClusters", 0, "networkConnector"]. */
export type ConfigPath = (string | number)[];

/** Reports one problem at a setting; rules call it once per problem so all are reported in one pass. */
export type AddIssue = (at: ConfigPath, message: string) => void;

/** A well-formed config entry and where it sits in the stack config. */
export interface Located<T> {
  value: T;
  at: ConfigPath;
}
