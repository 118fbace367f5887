// The language conformance runner: loads test/conformance/language/*.json and runs each vector through an adapter.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { PolicyEnvironment } from "@agent-authority/language";
import { describe, expect, it } from "vitest";
import { SAMPLE_ENVIRONMENT } from "../../packages/language/test-support/arbitraries.js";
import type { LanguageAdapter, ObservedDiagnostic } from "./language-adapter.js";

/** A policy as data: a string, or pieces repeated to reach a limit without a 4 KiB line in the file. */
type PolicyText = string | { readonly concat: readonly { readonly text: string; readonly times?: number }[] };

interface Vector {
  readonly name: string;
  readonly policy?: PolicyText;
  /** Several policies conjoined, root first (a delegation chain); only `decide` is checked. */
  readonly chain?: readonly PolicyText[];
  /** Overrides of the base environment; `args` replaces the base `args` whole. */
  readonly env?: Partial<Record<keyof PolicyEnvironment, unknown>>;
  /** Compile must fail with exactly these errors (code and span). */
  readonly errors?: readonly { code: string; span: [number, number] }[];
  /** Compile must succeed with exactly these warnings; absent means none. */
  readonly warnings?: readonly { code: string; span: [number, number] }[];
  /** Set (with a reason) where a vector's point is elsewhere and its warnings are many. */
  readonly ignoreWarnings?: string;
  readonly evaluate?: boolean | { readonly error: ObservedDiagnostic };
  readonly decide?: { readonly outcome: "allow" | "deny" | "gated"; readonly residual?: string; readonly error?: ObservedDiagnostic };
  readonly format?: string | { readonly errors: readonly ObservedDiagnostic[] };
}

interface VectorFile {
  readonly description: string;
  /** Vectors skipped on purpose, each with its reason; never dropped silently. */
  readonly skipped?: readonly { readonly name: string; readonly reason: string }[];
  readonly vectors: readonly Vector[];
}

/** The environment every vector starts from: the sample one, with something already spent. */
const BASE_ENV: PolicyEnvironment = { ...SAMPLE_ENVIRONMENT, spent_minor: 10000 };

function text(policy: PolicyText): string {
  if (typeof policy === "string") return policy;
  return policy.concat.map((part) => part.text.repeat(part.times ?? 1)).join("");
}

const dir = fileURLToPath(new URL("./language/", import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();

/** Runs every vector through `adapter`; the CLI can call this with its own adapter. */
export function runLanguageVectors(adapter: LanguageAdapter): void {
  let total = 0;
  for (const file of files) {
    const data = JSON.parse(readFileSync(join(dir, file), "utf8")) as VectorFile;
    describe(`${adapter.name}: ${file}: ${data.description}`, () => {
      for (const skip of data.skipped ?? []) it.skip(`${skip.name} (skipped: ${skip.reason})`, () => {});
      for (const vector of data.vectors) {
        total++;
        it(vector.name, async () => {
          await runVector(adapter, vector);
        });
      }
    });
  }
  it(`${adapter.name}: has at least 150 vectors`, () => {
    expect(total).toBeGreaterThanOrEqual(150);
  });
}

/**
 * An environment's values as data: `{"$repeat": v, "times": n}` stands for a list of `n` copies of
 * `v` (itself expanded), so a vector can hold `args` past a size limit without a file that large.
 */
function expand(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(expand);
  if (value === null || typeof value !== "object") return value;
  const record = value as Record<string, unknown>;
  if (Object.prototype.hasOwnProperty.call(record, "$repeat")) {
    const element = expand(record["$repeat"]);
    return Array.from({ length: Number(record["times"] ?? 1) }, () => element);
  }
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, expand(v)]));
}

async function runVector(adapter: LanguageAdapter, vector: Vector): Promise<void> {
  const env = { ...BASE_ENV, ...(expand(vector.env ?? {}) as object) } as PolicyEnvironment;
  if (vector.policy !== undefined) {
    const policy = text(vector.policy);
    const compiled = await adapter.compile(policy);
    if (vector.errors !== undefined) {
      expect(compiled).toEqual({ ok: false, errors: vector.errors });
    } else {
      expect(compiled.ok ? "compiles" : compiled.errors).toBe("compiles");
      if (compiled.ok && vector.ignoreWarnings === undefined) expect(compiled.warnings).toEqual(vector.warnings ?? []);
      if (vector.evaluate !== undefined) {
        const observed = await adapter.evaluate(policy, env);
        expect(observed).toEqual(typeof vector.evaluate === "boolean" ? { value: vector.evaluate } : vector.evaluate);
      }
    }
    if (vector.format !== undefined) {
      const observed = await adapter.format(policy);
      expect(observed).toEqual(typeof vector.format === "string" ? { ok: true, text: vector.format } : { ok: false, errors: vector.format.errors });
    }
  }
  if (vector.decide !== undefined) {
    const chain = vector.chain !== undefined ? vector.chain.map(text) : [text(vector.policy!)];
    const { approver: _ignored, ...withoutApprover } = env;
    expect(await adapter.decide(chain, withoutApprover)).toEqual(vector.decide);
  }
}

