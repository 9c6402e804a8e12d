/**
 * The function's entry point: serves `compose` over gRPC. The SDK parses the standard flags
 * (--address, default 0.0.0.0:9443; --insecure; --tls-server-certs-dir, default /tls/server,
 * where Crossplane mounts the certificates it makes for a Function package; --debug) and stops
 * the server on SIGTERM and SIGINT.
 *
 * In its image Node.js runs the transpiled main.js (host/local-clusters/images/function-image.ts), as
 * test/e2e/function-render.test.ts does with --insecure --address=127.0.0.1:<port>.
 */
import { serve } from "@crossplane-org/function-sdk-typescript";
import { compose } from "./compose.js";
import { FUNCTION_NAME } from "./input.js";

serve(compose, { name: FUNCTION_NAME });
