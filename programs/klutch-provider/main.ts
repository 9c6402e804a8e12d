/**
 * Entry point of the `pulumi-resource-klutch` plugin (programs/klutch-provider/plugin/pulumi-resource-klutch runs
 * it): the engine starts it, reads the port it prints, and calls GetSchema, Construct and the
 * CRUD of the `klutch:internal:*` resources its components make.
 */
import * as provider from "@pulumi/pulumi/provider";
import { setResourceServing } from "../../providers/dynamic/klutch-resource";
import { KlutchProvider } from "./provider";

setResourceServing("plugin");
provider.main(new KlutchProvider(), process.argv.slice(2)).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
