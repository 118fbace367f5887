// Progress towards the host on hostile upstream values: whatever an upstream reports (repeated,
// decreasing, NaN, infinite, huge), what reaches the host is finite and strictly increasing; and
// hostile prompt names never make an action name the server would refuse or read as a pattern.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { API_LIMITS } from "@agent-authority/api";
import { ProgressRelay, promptAction, promptNameAllowed, resourceAction } from "@agent-authority/gateway";

const params = { numRuns: 500, seed: Number(process.env["FC_SEED"] ?? 20261126) };

const value = fc.oneof(
  fc.double(),
  fc.integer({ min: -5, max: 50 }),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0, -0),
);
const step = fc.oneof(
  fc.record({ kind: fc.constant("own" as const), progress: value }),
  fc.record({ kind: fc.constant("forward" as const) }),
  fc.record({ kind: fc.constant("upstream" as const), progress: value, total: fc.option(value, { nil: undefined }) }),
);

describe("ProgressRelay on hostile values", () => {
  it("sends only finite values, each above the one before, with a total never below its value", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
        const sent: { progress: number; total: number | undefined }[] = [];
        const relay = new ProgressRelay(async (progress, total) => {
          sent.push({ progress, total });
        });
        let upstream = relay.forwarding();
        for (const s of steps) {
          if (s.kind === "own") await relay.report(s.progress, undefined, "waiting");
          else if (s.kind === "forward") upstream = relay.forwarding();
          else upstream({ progress: s.progress, ...(s.total === undefined ? {} : { total: s.total }) });
        }
        await new Promise((resolve) => setImmediate(resolve));
        for (let i = 0; i < sent.length; i += 1) {
          expect(Number.isFinite(sent[i]!.progress)).toBe(true);
          if (i > 0) expect(sent[i]!.progress).toBeGreaterThan(sent[i - 1]!.progress);
          if (sent[i]!.total !== undefined) expect(sent[i]!.total!).toBeGreaterThanOrEqual(sent[i]!.progress);
        }
      }),
      params,
    );
  });

  it("passes an upstream's own increasing values unchanged when nothing was sent before, and shifts them past an approval wait", async () => {
    const sent: number[] = [];
    const relay = new ProgressRelay(async (progress) => {
      sent.push(progress);
    });
    const direct = relay.forwarding();
    for (const p of [1, 2, 3]) direct({ progress: p, total: 3 });
    const waited = new ProgressRelay(async (progress) => {
      sent.push(progress);
    });
    await waited.report(12.5, 55, "waiting");
    const forward = waited.forwarding();
    forward({ progress: 1 });
    forward({ progress: 1 });
    forward({ progress: 2 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([1, 2, 3, 12.5, 13.5, 14.5]);
  });
});

describe("action names of resources and prompts on hostile names", () => {
  const upstreamName = fc.stringMatching(/^[a-z][a-z0-9_-]{0,63}$/);
  it("a prompt name the gateway accepts always gives an action name the authority server accepts; no other is offered", () => {
    fc.assert(
      fc.property(
        upstreamName,
        fc.oneof(fc.string({ maxLength: 300 }), fc.stringMatching(/^[A-Za-z0-9_.*:/ -]{0,200}$/)),
        (upstream, name) => {
          const action = promptAction(upstream, name);
          if (promptNameAllowed(name)) {
            expect(action).toMatch(/^[A-Za-z0-9_.:*-]+$/);
            expect(action.length).toBeLessThanOrEqual(API_LIMITS.toolNameCharsMax);
            // No prompt name reaches a pattern entry or another upstream's namespace.
            expect(name.includes("*")).toBe(false);
          }
          expect(resourceAction(upstream)).toMatch(/^resource:[a-z][a-z0-9_-]*$/);
        },
      ),
      params,
    );
  });
});
