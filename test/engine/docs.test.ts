// docs/decisions.md lists exactly the reason codes the engine can answer, and the gates in order.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { decide, GATES, REASONS } from "@agent-authority/engine";
import { chainOf, NOW, request, stateFor } from "./fixtures.js";

const doc = readFileSync(new URL("../../docs/decisions.md", import.meta.url), "utf8");

describe("docs/decisions.md", () => {
  it("has a row for every reason code, and no row for a code the engine does not know", () => {
    const rows = [...doc.matchAll(/^\| `([a-z_]+\.[a-z_]+)` \|/gm)].map((m) => m[1]!);
    expect(new Set(rows)).toEqual(new Set(Object.keys(REASONS)));
    expect(rows).toHaveLength(new Set(rows).size);
  });

  it("names each row's gate and outcome as the catalogue does", () => {
    for (const match of doc.matchAll(/^\| `([a-z_]+\.[a-z_]+)` \| ([a-z—]+) \| ([a-z—]+)/gm)) {
      const entry = REASONS[match[1] as keyof typeof REASONS];
      expect([match[1], match[2] === "—" ? null : match[2], match[3] === "—" ? null : match[3]]).toEqual([
        match[1],
        entry.gate,
        entry.outcome,
      ]);
    }
  });

  it("lists the nine gates in the engine's order", () => {
    const listed = [...doc.matchAll(/^\d\. \*\*([a-z]+)\*\*/gm)].map((m) => m[1]);
    expect(listed).toEqual([...GATES]);
  });

  it("marks the gates after a refusal as not reached, with the catalogue's code", () => {
    const decision = decide(request({ tool: "mail.read" }), chainOf(), stateFor(), NOW);
    expect(decision.gates.slice(6).every((g) => g.result === "not_reached" && g.code === "gate.not_reached")).toBe(true);
  });
});
