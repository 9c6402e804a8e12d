/**
 * Where a release of this project is published, said once: the package schema's links and plugin
 * download URL (providers/kit/schema-model.ts), and so every generated SDK; the bridge image's
 * registry and the Go SDK's module path (programs/release/). Change the host here and
 * `npm run provider:schema && npm run provider:sdks` carries it everywhere.
 */

/** The repository the releases are cut from. */
export const REPOSITORY = "https://github.com/anynines/klutch-pulumi";

/**
 * Where the engine fetches the plugin from when a program's SDK names it and it is not installed:
 * GitHub releases of REPOSITORY, `v<version>/pulumi-resource-klutch-v<version>-<os>-<arch>.tar.gz`,
 * the archive names programs/release/plugin-archives.ts writes. `github://api.github.com/<org>/<repo>`
 * is the engine's GitHub source (pulumi/pulumi sdk/go/common/workspace/plugins.go, newGithubSource,
 * v3.276.0); an http(s) URL is taken as a folder the archives sit in (newHTTPSource there).
 */
export const PLUGIN_DOWNLOAD_URL = "github://api.github.com/anynines/klutch-pulumi";

/** The package's page (the schema's homepage). */
export const HOMEPAGE = REPOSITORY;

/** The logo the registry and the .NET package show: the file committed beside the provider. */
export const LOGO_URL =
  "https://raw.githubusercontent.com/anynines/klutch-pulumi/main/programs/klutch-provider/logo.png";

/** Where a published release's bridge image lives (the repository's own container registry). */
export const BRIDGE_IMAGE_REPOSITORY = "ghcr.io/anynines/klutch-pulumi/bridge";

/** The Go SDK's module (sdk/go/go.mod, from the schema's language.go.importBasePath). */
export const GO_SDK_MODULE = "github.com/anynines/klutch-pulumi/sdk/go";

/** What the package schema says of where it lives. */
export interface Publication {
  pluginDownloadURL: string;
  repository: string;
  homepage: string;
  logoUrl: string;
}

export const PUBLICATION: Publication = {
  pluginDownloadURL: PLUGIN_DOWNLOAD_URL,
  repository: REPOSITORY,
  homepage: HOMEPAGE,
  logoUrl: LOGO_URL,
};
