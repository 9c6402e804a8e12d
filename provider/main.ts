/**
 * Entry point of the `pulumi-resource-klutch` plugin (provider/plugin/pulumi-resource-klutch runs
 * it): the engine starts it, reads the port it prints, and calls GetSchema and Construct.
 */
import * as provider from "@pulumi/pulumi/provider";
import { KlutchProvider } from "./provider";

provider.main(new KlutchProvider(), process.argv.slice(2)).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
