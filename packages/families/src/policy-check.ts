// Policy checks of a family: the language's diagnostics, mapped to the file, line and column.
import { compilePolicy, lintPolicy, type Diagnostic, type Fix } from "@agent-authority/language";
import { type Document, Scalar } from "yaml";
import { type FamilyDiagnostic, type FamilyFix, sortDiagnostics } from "./diagnostics.js";
import { scalarAt } from "./locate.js";
import { substituteText } from "./placeholders.js";
import { mapScalar } from "./scalar-map.js";
import type { ParameterValue } from "./schema.js";
import type { SourceText } from "./source.js";

/**
 * Compiles and lints the family's policy with each placeholder replaced by a sample value, and
 * reports every language diagnostic at its column inside the policy string of the YAML file.
 */
export function checkFamilyPolicy(
  source: SourceText,
  doc: Document,
  template: string,
  samples: Readonly<Record<string, ParameterValue>>,
  path: readonly (string | number)[] = ["grant", "policy"],
): FamilyDiagnostic[] {
  const substituted = substituteText(template, samples, "policy");
  const compiled = compilePolicy(substituted.text);
  const found: readonly Diagnostic[] = compiled.ok ? [...compiled.warnings, ...lintPolicy(substituted.text)] : compiled.diagnostics;
  const node = scalarAt(doc, path);
  const map = node === null ? undefined : mapScalar(source.text, node);
  const toSource = (offset: number): number => {
    const inTemplate = substituted.templateOffset(offset);
    return map === undefined ? 0 : map.sourceOffset(inTemplate);
  };
  const seen = new Set<string>();
  const out: FamilyDiagnostic[] = [];
  for (const d of found) {
    const start = toSource(d.span.start);
    const end = d.span.end > d.span.start ? toSource(d.span.end - 1) + 1 : start;
    const key = `${d.code}|${start}|${end}|${d.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const help = [d.help, map !== undefined && !map.exact ? "the position inside this policy string is approximate" : undefined]
      .filter((h): h is string => h !== undefined)
      .join("; ");
    // A fix is offered only where every position is exact, written as the scalar's style needs.
    const fix = d.fix !== undefined && map?.exact === true && node !== null ? familyFix(source, d.fix, toSource, node.type) : undefined;
    out.push({
      code: `policy/${d.code}`,
      severity: d.severity,
      message: d.message,
      ...(help.length > 0 ? { help } : {}),
      file: source.file,
      range: source.range(start, end),
      ...(fix !== undefined ? { fix } : {}),
    });
  }
  return out;
}

function familyFix(source: SourceText, fix: Fix, toSource: (offset: number) => number, style: Scalar["type"]): FamilyFix {
  const start = toSource(fix.span.start);
  const end = fix.span.end > fix.span.start ? toSource(fix.span.end - 1) + 1 : start;
  const text =
    style === Scalar.QUOTE_DOUBLE
      ? fix.text.replace(/[\\"]/g, (c) => `\\${c}`)
      : style === Scalar.QUOTE_SINGLE
        ? fix.text.replace(/'/g, "''")
        : fix.text;
  return { title: fix.title, range: source.range(start, end), text };
}

/** Checks a standalone `.policy` file: every diagnostic of the language, at its line and column. */
export function checkPolicyFile(source: SourceText): FamilyDiagnostic[] {
  const compiled = compilePolicy(source.text);
  const found = compiled.ok ? [...compiled.warnings, ...lintPolicy(source.text)] : compiled.diagnostics;
  const seen = new Set<string>();
  const out: FamilyDiagnostic[] = [];
  for (const d of found) {
    const key = `${d.code}|${d.span.start}|${d.span.end}|${d.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({
      code: `policy/${d.code}`,
      severity: d.severity,
      message: d.message,
      ...(d.help !== undefined ? { help: d.help } : {}),
      file: source.file,
      range: source.range(d.span.start, d.span.end),
      ...(d.fix !== undefined
        ? { fix: { title: d.fix.title, range: source.range(d.fix.span.start, d.fix.span.end), text: d.fix.text } }
        : {}),
    });
  }
  // The checker's warnings and lint's come from separate passes: the file reads them in source order.
  return sortDiagnostics(out);
}
