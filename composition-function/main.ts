/**
 * The function's entry point: serves `compose` over gRPC. The SDK parses the standard flags
 * (--address, default 0.0.0.0:9443; --insecure; --tls-server-certs-dir, default /tls/server,
 * where Crossplane mounts the certificates it makes for a Function package; --debug) and stops
 * the server on SIGTERM and SIGINT.
 *
 *   node --import tsx composition-function/main.ts --insecure --address=127.0.0.1:9443
 */
import { serve } from "@crossplane-org/function-sdk-typescript";
import { compose } from "./compose.js";
import { FUNCTION_NAME } from "./input.js";

serve(compose, { name: FUNCTION_NAME });
