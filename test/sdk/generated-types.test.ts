// The committed generated types equal what the generator makes from the current api schemas.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as api from "@agent-authority/api";
import { generatedPath, renderTypes } from "../../packages/sdk/generate.mjs";

describe("packages/sdk/src/generated/types.ts", () => {
  it("has not drifted from the schemas of @agent-authority/api", () => {
    const committed = readFileSync(generatedPath, "utf8");
    // On failure: run `npx tsc -b packages/api && node packages/sdk/generate.mjs` and commit the result.
    expect(committed).toBe(renderTypes(api));
  });

  it("declares a type for every schema the api names", () => {
    const text = renderTypes(api);
    for (const schema of api.allSchemas) expect(text).toMatch(new RegExp(`export (interface|type) ${schema.$id}\\b`));
    expect(text).toContain("export type ProblemCode =");
  });
});
