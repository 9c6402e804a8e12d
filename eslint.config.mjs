// ESLint flat config: TypeScript's type-aware rules plus the Pulumi plugin's
// rules, which catch Outputs interpolated into plain template strings.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import pulumi from "@pulumi/eslint-plugin";

export default tseslint.config(
  {
    // provider/sdk: the klutch provider's SDKs, generated (npm run provider:sdks); test/sdk: the
    // programs on them, compiled against the built SDKs by their test (not in tsconfig.json).
    ignores: [
      "node_modules/**",
      "bin/**",
      ".pulumi/**",
      ".klutch/**",
      "provider/sdk/**",
      "test/sdk/**",
      "eslint.config.mjs",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "@pulumi": pulumi },
    rules: {
      "@pulumi/no-output-in-template-literal": "error",
      "@pulumi/no-output-instance-in-template-literal": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    // lib/ is pure: decisions and renderings over plain data, tested without mocks. It never
    // reaches up into Pulumi resources, processes or the bridge; that code imports lib/, not
    // the other way round. The pure planners and renderers inside network/<implementation>/
    // are held to the same rule, so a folder can keep them beside its components.
    files: [
      "lib/**/*.ts",
      "network/registry.ts",
      "network/*/{config,checks,types,planner,plan-checks,addresses,keys,haproxy-config,port-planner,profile,peering-plan,xrd,compositions,network-path-crd,exposure}.ts",
      "network/*/render-*.ts",
    ],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: [
                "@pulumi/*",
                "**/components/**",
                "**/providers/**",
                "**/bridge/**",
                // …but lib/bridge/ is lib: from a lib/<folder>/ file, ../bridge/ is lib/bridge.
                "!../bridge/**",
                "**/tooling/**",
                "**/local-clusters/**",
                "node:child_process",
                "child_process",
              ],
              message:
                "lib/ and the pure planners stay pure: no Pulumi, no processes, no components, providers, bridge, tooling or local clusters. Move the code that needs them out, or pass the data in.",
            },
            {
              group: [
                "**/network/*/*",
                "!**/network/*/config",
                "!**/network/*/checks",
                "!**/network/*/types",
                "!**/network/*/planner",
                "!**/network/*/plan-checks",
                "!**/network/*/addresses",
                "!**/network/*/keys",
                "!**/network/*/haproxy-config",
                "!**/network/*/port-planner",
                "!**/network/*/profile",
                "!**/network/*/peering-plan",
                "!**/network/*/xrd",
                "!**/network/*/compositions",
                "!**/network/*/network-path-crd",
                "!**/network/*/exposure",
                "!**/network/*/render-*",
              ],
              message:
                "Pure code may import only the pure files of network/<implementation>/ (planners, renderers, config, types).",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["test/**/*.ts", "**/*.test.ts"],
    rules: {
      // Tests poke at raw, deliberately malformed config and at what mocks recorded:
      // untyped data is the point there.
      "@typescript-eslint/no-unused-expressions": "off",
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
    },
  },
);
