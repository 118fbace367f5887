// The family compiler: YAML text to the JSON body of `POST /v1/grant-families`, or diagnostics.
import { type Document, isScalar, LineCounter, visit } from "yaml";
import { parseYamlDocument } from "./yaml-document.js";
import { type FamilyDiagnostic, hasErrors, sortDiagnostics } from "./diagnostics.js";
import { placeFlowErrors } from "./flow.js";
import { familyContentHash } from "./hash.js";
import { type JsonPath, rangeOf, scalarAt } from "./locate.js";
import { resolveParameters, sampleValue, checkParameter } from "./parameters.js";
import { compilePattern, instantiationCost, PatternBudget } from "./patterns.js";
import { placeholdersIn, placeholdersInPolicyStrings, substituteGrant } from "./placeholders.js";
import { checkFamilyPolicy } from "./policy-check.js";
import { mapScalar } from "./scalar-map.js";
import { setOwn } from "./own.js";
import { FAMILY_LIMITS, type GrantFamilyBody, type ParameterSpec, type ParameterValue } from "./schema.js";
import { SourceText } from "./source.js";
import { closest, type SchemaError, validateFamilyBody, validateGrantIssueBody } from "./validate.js";
import { approvalRequired } from "./instantiate.js";

export interface CompiledFamily {
  /** True when there is no error (warnings may remain). */
  readonly ok: boolean;
  /** The body to send, present when `ok`. */
  readonly body: GrantFamilyBody | undefined;
  readonly diagnostics: readonly FamilyDiagnostic[];
  readonly source: SourceText;
  /** The YAML document, present when the text parsed. */
  readonly document: Document | undefined;
}

/**
 * A file over the size limit, refused unparsed. The parser filled no line index, so this source
 * indexes the lines itself (linear), and the error stands at line 1, column 1.
 */
function tooLarge(text: string, file: string): CompiledFamily {
  const indexed = new SourceText(file, text);
  const diagnostics = [
    diag(
      indexed,
      "family-too-large",
      `the file has ${text.length} characters, more than ${FAMILY_LIMITS.sourceBytesMax}`,
      indexed.range(0, 0),
    ),
  ];
  return { ok: false, body: undefined, diagnostics, source: indexed, document: undefined };
}

/** The parser's errors and warnings, placed where the text went wrong. */
function syntaxDiagnostics(text: string, doc: Document, source: SourceText): FamilyDiagnostic[] {
  return placeFlowErrors(text, [...doc.errors, ...doc.warnings]).map(({ error: e, start, end, help }) =>
    diag(
      source,
      `yaml/${e.code.toLowerCase().replace(/_/g, "-")}`,
      yamlMessage(e.message),
      source.range(start, end),
      e.name === "YAMLWarning" ? "warning" : "error",
      help,
    ),
  );
}

/** The document as a JSON mapping, or the diagnostic saying why it is not one (a bad alias, not a mapping). */
function authoredMapping(doc: Document, source: SourceText): { mapping: Record<string, unknown> } | { refusal: FamilyDiagnostic } {
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    const message = error instanceof Error ? error.message.toLowerCase() : "invalid alias";
    return { refusal: diag(source, "yaml/alias", message, source.range(0, 0)) };
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    const message = "a family must be a mapping with `id`, `version`, `reviewed_by`, `parameters` and `grant`";
    return { refusal: diag(source, "schema", message, source.range(0, 0)) };
  }
  return { mapping: data as Record<string, unknown> };
}

/** An authored `content_hash` must be the one the content hashes to. */
function checkAuthoredHash(
  source: SourceText,
  doc: Document,
  authored: Record<string, unknown>,
  contentHash: string | undefined,
): FamilyDiagnostic[] {
  if (contentHash === undefined || authored["content_hash"] === undefined || authored["content_hash"] === contentHash) return [];
  return [
    diag(
      source,
      "content-hash-mismatch",
      `\`content_hash\` does not match the content, which hashes to \`${contentHash}\``,
      rangeOf(source, doc, ["content_hash"]),
      "error",
      "remove the field or update it: the compiler computes it",
    ),
  ];
}

/** Compiles one family; never throws for any input text. */
export function compileFamily(text: string, file: string): CompiledFamily {
  if (text.length > FAMILY_LIMITS.sourceBytesMax) return tooLarge(text, file);
  const lines = new LineCounter();
  const source = new SourceText(file, text, lines);
  const fail = (diagnostics: FamilyDiagnostic[], document?: Document): CompiledFamily => ({
    ok: false,
    body: undefined,
    diagnostics: sortDiagnostics(diagnostics),
    source,
    document,
  });
  const doc = parseYamlDocument(text, { lineCounter: lines, prettyErrors: false, strict: true });
  const syntax = syntaxDiagnostics(text, doc, source);
  if (doc.errors.length > 0) return fail(syntax, doc);
  const read = authoredMapping(doc, source);
  if ("refusal" in read) return fail([...syntax, read.refusal], doc);
  const authored = read.mapping;
  const contentHash = hashOrUndefined(authored);
  const diagnostics: FamilyDiagnostic[] = [...syntax, ...checkAuthoredHash(source, doc, authored, contentHash)];
  // A value JSON cannot hold (YAML's `.inf`, `.nan`) has no hash; the schema then says where it is.
  const body = { ...authored, content_hash: contentHash ?? UNHASHABLE };
  const schemaErrors = validateFamilyBody(body).filter((e) => contentHash !== undefined || e.path[0] !== "content_hash");
  diagnostics.push(...schemaErrors.map((e) => schemaDiag(source, doc, e, "schema")));
  if (hasErrors(diagnostics)) {
    // The later checks still run on the parts the schema accepted, so that one run reports every
    // error of the file, in source order (lint bounds how many it shows).
    diagnostics.push(...checkWellFormedParts(source, doc, body, schemaErrors));
    return fail(diagnostics, doc);
  }
  const family = body as unknown as GrantFamilyBody;
  diagnostics.push(...checkFamily(source, doc, family));
  if (hasErrors(diagnostics)) return fail(diagnostics, doc);
  return { ok: true, body: family, diagnostics: sortDiagnostics(diagnostics), source, document: doc };
}

const UNHASHABLE = "unhashable";

function hashOrUndefined(authored: Record<string, unknown>): string | undefined {
  try {
    return familyContentHash(authored);
  } catch {
    return undefined;
  }
}

/**
 * The checks that can run on a body the schema refused: the parameters and placeholders when the
 * parameters are well-formed, and the policy when it is a string whose placeholders all name
 * declared parameters. Nothing whose shape the schema refused is looked into.
 */
function checkWellFormedParts(
  source: SourceText,
  doc: Document,
  body: Record<string, unknown>,
  schemaErrors: readonly SchemaError[],
): FamilyDiagnostic[] {
  // Whether the schema refused something at `path`, inside it, or around it.
  const refused = (path: readonly (string | number)[]): boolean =>
    schemaErrors.some((e) => path.every((key, i) => e.path[i] === key) || e.path.every((key, i) => path[i] === key));
  const parameters = body["parameters"];
  const grant = body["grant"];
  if (!isPlainObject(parameters) || refused(["parameters"]) || !isPlainObject(grant)) return [];
  const family = body as unknown as GrantFamilyBody;
  const budget = new PatternBudget(FAMILY_LIMITS.patternCheckUnitsMax);
  const out: FamilyDiagnostic[] = [
    ...checkParameterSpecs(source, doc, family.parameters, budget),
    ...checkPlaceholders(source, doc, family),
  ];
  const policy = grant["policy"];
  if (
    typeof policy === "string" &&
    !refused(["grant", "policy"]) &&
    placeholdersIn(policy).every((use) => Object.hasOwn(parameters, use.name))
  ) {
    out.push(...checkFamilyPolicy(source, doc, policy, samplesOf(family.parameters)));
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Each parameter at its example, default or lower bound: the values a sample instantiation uses. */
function samplesOf(parameters: Readonly<Record<string, ParameterSpec>>): Record<string, ParameterValue> {
  const samples: Record<string, ParameterValue> = {};
  for (const [name, spec] of Object.entries(parameters)) {
    const value = sampleValue(spec);
    if (value !== undefined) setOwn(samples, name, value);
  }
  return samples;
}

function checkFamily(source: SourceText, doc: Document, family: GrantFamilyBody): FamilyDiagnostic[] {
  // One budget pays for every pattern match of this compile: defaults, examples and enum values.
  const budget = new PatternBudget(FAMILY_LIMITS.patternCheckUnitsMax);
  const out: FamilyDiagnostic[] = [...checkParameterSpecs(source, doc, family.parameters, budget)];
  out.push(...checkPlaceholders(source, doc, family));
  const samples = samplesOf(family.parameters);
  if (hasErrors(out)) {
    // The policy is still checked when its own placeholders are declared: its errors belong to this run too.
    const policy = family.grant["policy"];
    if (typeof policy === "string" && placeholdersIn(policy).every((use) => Object.hasOwn(family.parameters, use.name))) {
      out.push(...checkFamilyPolicy(source, doc, policy, samples));
    }
    return out;
  }
  // The grant a sample instantiation yields must be a valid issue body: this is where a
  // placeholder of the wrong type for its field is found, reported at the field.
  const sampleGrant = substituteGrant(family.grant, samples) as Record<string, unknown>;
  if (approvalRequired(family, sampleGrant)) sampleGrant["require_approval"] = true;
  for (const error of validateGrantIssueBody(sampleGrant)) {
    out.push(
      schemaDiag(
        source,
        doc,
        { ...error, path: ["grant", ...error.path] },
        "grant-shape",
        "checked with each parameter at its example, default or lower bound",
      ),
    );
  }
  if (typeof family.grant["policy"] === "string") {
    out.push(...checkFamilyPolicy(source, doc, family.grant["policy"], samples));
  }
  out.push(...checkExamples(source, doc, family, budget));
  if ((family.examples ?? []).length === 0) {
    out.push(
      diag(
        source,
        "examples-missing",
        `family \`${family.id}\` has no examples`,
        rangeOf(source, doc, ["id"], "key"),
        "warning",
        "add `examples`: sample actions with the outcome each must get, which `authority test` checks",
      ),
    );
  }
  return out;
}

function checkParameterSpecs(
  source: SourceText,
  doc: Document,
  specs: Readonly<Record<string, ParameterSpec>>,
  budget: PatternBudget,
): FamilyDiagnostic[] {
  const out: FamilyDiagnostic[] = [];
  for (const [name, spec] of Object.entries(specs)) {
    const at = (field: string): ReturnType<typeof rangeOf> => rangeOf(source, doc, ["parameters", name, field]);
    if (spec.type === "int" && spec.min !== undefined && spec.max !== undefined && spec.min > spec.max) {
      out.push(diag(source, "parameter-bounds", `parameter \`${name}\` has \`min\` ${spec.min} above \`max\` ${spec.max}`, at("min")));
    }
    const compiled = spec.pattern === undefined ? undefined : compilePattern(spec.pattern);
    if (compiled !== undefined && !compiled.ok) {
      const range = compiled.index === undefined ? at("pattern") : (insidePattern(source, doc, name, compiled.index) ?? at("pattern"));
      out.push({
        ...diag(
          source,
          "parameter-pattern",
          `the pattern of parameter \`${name}\` is refused: ${compiled.reason}`,
          range,
          "error",
          PATTERN_HELP,
        ),
        field: `parameters.${name}.pattern`,
      });
      continue;
    }
    for (const field of ["default", "example"] as const) {
      const value = spec[field];
      if (value === undefined) continue;
      for (const problem of checkParameter(name, spec, value, budget)) {
        out.push(diag(source, problem.code, `the ${field} of ${problem.message}`, at(field)));
      }
    }
    if (spec.type === "string" && spec.enum !== undefined && compiled?.ok === true) {
      spec.enum.forEach((value, index) => {
        const found = budget.check(compiled.pattern, value);
        if (found === "match") return;
        const message =
          found === "mismatch"
            ? `enum value \`${value}\` does not match the pattern \`${spec.pattern}\``
            : `enum value \`${value}\` cannot be checked: matching the values against the patterns would cost more than ${budget.units} units`;
        out.push(diag(source, "parameter-bounds", message, rangeOf(source, doc, ["parameters", name, "enum", index])));
      });
    }
  }
  out.push(...checkInstantiationCost(source, doc, specs));
  return out;
}

/** The position of character `index` of a parameter's pattern in the file, when the scalar maps exactly. */
function insidePattern(source: SourceText, doc: Document, name: string, index: number): FamilyDiagnostic["range"] | undefined {
  const node = scalarAt(doc, ["parameters", name, "pattern"]);
  if (node === null) return undefined;
  const map = mapScalar(source.text, node);
  if (!map.exact) return undefined;
  const start = map.sourceOffset(index);
  return source.range(start, start + 1);
}

const PATTERN_HELP = "patterns use RE2 syntax and match the whole value; see docs/families.md";

/** A family whose patterns could cost an instantiation more than `patternMatchUnitsMax` is refused at its costliest pattern. */
function checkInstantiationCost(source: SourceText, doc: Document, specs: Readonly<Record<string, ParameterSpec>>): FamilyDiagnostic[] {
  const total = instantiationCost(specs);
  if (total <= FAMILY_LIMITS.patternMatchUnitsMax) return [];
  const costliest = Object.entries(specs)
    .filter(([, spec]) => spec.pattern !== undefined)
    .map(([name, spec]) => ({ name, cost: instantiationCost({ [name]: spec }) }))
    .sort((a, b) => b.cost - a.cost)[0]!;
  const message = `the parameter patterns could cost an instantiation ${total} units (instructions × (max_length + 1), summed), more than ${FAMILY_LIMITS.patternMatchUnitsMax}`;
  return [
    {
      ...diag(
        source,
        "parameter-pattern",
        message,
        rangeOf(source, doc, ["parameters", costliest.name, "pattern"]),
        "error",
        `parameter \`${costliest.name}\` costs the most (${costliest.cost}): lower its \`max_length\` or simplify its pattern`,
      ),
      field: `parameters.${costliest.name}.pattern`,
    },
  ];
}

/** Every placeholder names a declared parameter; every parameter is used. Reported at the placeholder's column. */
function checkPlaceholders(source: SourceText, doc: Document, family: GrantFamilyBody): FamilyDiagnostic[] {
  const out: FamilyDiagnostic[] = [];
  const declared = Object.keys(family.parameters);
  const used = new Set<string>();
  const grantNode = doc.get("grant", true);
  const policyNode = scalarAt(doc, ["grant", "policy"]);
  visit(grantNode as never, {
    Scalar(_key, node) {
      if (typeof node.value !== "string" || !isScalar(node)) return;
      const uses = placeholdersIn(node.value);
      if (uses.length === 0) return;
      const map = mapScalar(source.text, node);
      const quoted = node === policyNode ? placeholdersInPolicyStrings(node.value) : [];
      for (const use of quoted) {
        out.push(
          diag(
            source,
            "placeholder-in-string",
            `\`\${${use.name}}\` is inside a string literal of the policy`,
            source.range(map.sourceOffset(use.start), map.sourceOffset(use.end - 1) + 1),
            "error",
            `a placeholder in a policy stands for a whole value and becomes a quoted literal: write \`\${${use.name}}\` without the quotes`,
          ),
        );
      }
      for (const use of uses) {
        used.add(use.name);
        if (declared.includes(use.name)) continue;
        const suggestion = closest(use.name, declared);
        out.push(
          diag(
            source,
            "placeholder-unknown",
            `\`\${${use.name}}\` names no declared parameter`,
            source.range(map.sourceOffset(use.start), map.sourceOffset(use.end - 1) + 1),
            "error",
            suggestion !== undefined ? `did you mean \`\${${suggestion}}\`?` : `declare \`${use.name}\` under \`parameters\``,
          ),
        );
      }
    },
  });
  for (const name of declared) {
    if (!used.has(name)) {
      out.push(
        diag(
          source,
          "parameter-unused",
          `parameter \`${name}\` is declared but no placeholder uses it`,
          rangeOf(source, doc, ["parameters", name], "key"),
          "warning",
        ),
      );
    }
  }
  return out;
}

/** Each example's parameters must instantiate the family: types, bounds, names. */
function checkExamples(source: SourceText, doc: Document, family: GrantFamilyBody, budget: PatternBudget): FamilyDiagnostic[] {
  const out: FamilyDiagnostic[] = [];
  (family.examples ?? []).forEach((example, index) => {
    const given = example.parameters ?? {};
    const resolved = resolveParameters(family.parameters, exampleParameters(family, index), budget);
    if (resolved.ok) return;
    for (const problem of resolved.problems) {
      const path: JsonPath = Object.hasOwn(given, problem.parameter)
        ? ["examples", index, "parameters", problem.parameter]
        : ["examples", index, "parameters"];
      out.push(
        diag(
          source,
          `example/${problem.code}`,
          `example \`${example.name}\`: ${problem.message}`,
          rangeOf(source, doc, path, problem.code === "parameter-unknown" ? "key" : "value"),
        ),
      );
    }
  });
  return out;
}

/** The example value of each parameter that has no default: what a preview instantiates with unless told otherwise. */
export function sampleParameters(family: GrantFamilyBody): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(family.parameters)) {
    if (spec.default === undefined && spec.example !== undefined) setOwn(values, name, spec.example);
  }
  return values;
}

/** The parameters an example instantiates with: its own, over the sample parameters (then defaults apply). */
export function exampleParameters(family: GrantFamilyBody, index: number): Record<string, unknown> {
  return { ...sampleParameters(family), ...(family.examples?.[index]?.parameters ?? {}) };
}

function schemaDiag(source: SourceText, doc: Document, error: SchemaError, code: string, extraHelp?: string): FamilyDiagnostic {
  const help = [error.help, extraHelp].filter((h): h is string => h !== undefined).join("; ");
  return diag(source, code, error.message, rangeOf(source, doc, error.path, error.at), "error", help.length > 0 ? help : undefined);
}

function diag(
  source: SourceText,
  code: string,
  message: string,
  range: FamilyDiagnostic["range"],
  severity: FamilyDiagnostic["severity"] = "error",
  help?: string,
): FamilyDiagnostic {
  return { code, severity, message, ...(help !== undefined ? { help } : {}), file: source.file, range };
}

/** yaml's messages start with a capital and end with the position; ours are lower case and bare. */
function yamlMessage(message: string): string {
  const bare = message.replace(/ at line \d+, column \d+[\s\S]*$/, "").replace(/\.$/, "");
  return bare.charAt(0).toLowerCase() + bare.slice(1);
}
