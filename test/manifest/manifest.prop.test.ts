// Properties of the manifest hash and of the least-privilege comparison.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toolCovered } from "@agent-authority/lattice";
import { canonicalManifest, compareManifest, manifestHash, type Manifest, type ToolKind } from "../../cli/src/manifest/index.js";

const segment = fc.constantFrom("pay", "payments", "orders", "mail", "a", "b");
const name = fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join("."));
const kind = fc.constantFrom<ToolKind>("mcp", "guard");
const tool = fc.record({ name, kind });
const entry = fc.oneof(
  name,
  name.map((prefix) => `${prefix}.*`),
);

function manifestOf(tools: readonly { name: string; kind: ToolKind }[], complete = true): Manifest {
  return {
    manifest_version: 1,
    tools: tools.map((t) => ({ ...t, registrations: [] })),
    manifest_hash: manifestHash(tools),
    complete,
    warnings: [],
    files: [],
  };
}

describe("manifest_hash", () => {
  it("depends only on the set of (name, kind) pairs", () => {
    const toolsAndShuffle = fc
      .array(tool, { maxLength: 12 })
      .chain((tools) =>
        fc.shuffledSubarray(tools, { minLength: tools.length, maxLength: tools.length }).map((shuffled) => ({ tools, shuffled })),
      );
    fc.assert(
      fc.property(toolsAndShuffle, fc.array(fc.nat(), { maxLength: 12 }), ({ tools, shuffled }, picks) => {
        const duplicated = [...tools, ...picks.filter((i) => i < tools.length).map((i) => tools[i]!)];
        expect(manifestHash(shuffled)).toBe(manifestHash(tools));
        expect(manifestHash(duplicated)).toBe(manifestHash(tools));
        expect(JSON.parse(canonicalManifest(tools)).tools).toHaveLength(new Set(tools.map((t) => `${t.kind} ${t.name}`)).size);
      }),
    );
  });
});

describe("compareManifest", () => {
  it("splits used tools by the lattice's own coverage and finds every unused entry", () => {
    fc.assert(
      fc.property(fc.array(tool, { maxLength: 10 }), fc.array(entry, { maxLength: 8 }), (tools, granted) => {
        const result = compareManifest(manifestOf(tools), granted);
        const used = new Set(tools.map((t) => t.name));
        for (const name of used) expect(result.used_not_granted.includes(name)).toBe(!toolCovered(name, granted));
        for (const grantedEntry of new Set(granted)) {
          const usedByCode = [...used].some((name) => toolCovered(name, [grantedEntry]));
          expect(result.granted_not_used.includes(grantedEntry)).toBe(!usedByCode);
        }
        expect(result.least_privilege).toBe(result.used_not_granted.length === 0 && result.granted_not_used.length === 0);
      }),
    );
  });
});
