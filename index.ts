// Entry point for `pulumi up` with a stock Pulumi installation (its nodejs language host).
// `npm run pulumi -- up` runs the same program through the Automation API instead.
import { runKlutchProgram } from "./programs/stack/program";

export = runKlutchProgram();
