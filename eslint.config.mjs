// ESLint flat config: TypeScript's type-aware rules plus the Pulumi plugin's
// rules, which catch Outputs interpolated into plain template strings. Which folder may import
// which, and which folders are pure, is dependency-cruiser's (test/architecture/layers.cjs).
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import pulumi from "@pulumi/eslint-plugin";

export default tseslint.config(
  {
    // sdk: the klutch provider's SDKs, generated (npm run provider:sdks); test/sdk: the
    // programs on them, compiled against the built SDKs by their test (not in tsconfig.json).
    ignores: [
      "node_modules/**",
      "bin/**",
      ".pulumi/**",
      ".klutch/**",
      "sdk/**",
      "test/sdk/**",
      // The examples on the published SDKs, compiled against the built SDK by
      // test/e2e/provider-sdks.test.ts (not in tsconfig.json).
      "examples/**",
      // Linted in the copy where it is network/direct/ (test/e2e/plugin-seam.test.ts).
      "test/fixtures/direct-implementation/**",
      "eslint.config.mjs",
      ".dependency-cruiser.cjs",
      "test/architecture/layers.cjs",
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
      // New in ESLint 10's recommended set. The errors a catch throws here carry the caught
      // error's message (a tool's stderr, the log's tail) in their own text on purpose, one
      // message for the operator; a `cause` as well would print it twice.
      "preserve-caught-error": "off",
    },
  },
  {
    files: ["test/**/*.ts", "**/*.test.ts", "**/test-helpers.ts"],
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
  {
    // The TypeScript loader is plain CommonJS: Node.js loads it before any TypeScript can run.
    files: ["host/scripts/*.cjs"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      sourceType: "commonjs",
      globals: { require: "readonly", process: "readonly" },
    },
    rules: {
      "@typescript-eslint/no-require-imports": "off",
      // Both need TypeScript's types; nothing here touches a Pulumi Output.
      "@pulumi/no-output-in-template-literal": "off",
      "@pulumi/no-output-instance-in-template-literal": "off",
    },
  },
);
