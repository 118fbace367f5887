// A grant issue body in a file (JSON, or YAML), checked with positions: for `authority preview`.
import { LineCounter } from "yaml";
import { parseYamlDocument } from "./yaml-document.js";
import { type FamilyDiagnostic, hasErrors, sortDiagnostics } from "./diagnostics.js";
import { rangeOf } from "./locate.js";
import { checkFamilyPolicy } from "./policy-check.js";
import type { SampleAction } from "./schema.js";
import { SourceText } from "./source.js";
import { validateGrantIssueBody } from "./validate.js";

export interface CheckedGrant {
  readonly ok: boolean;
  /** The issue body without `action`, present when `ok`. */
  readonly grant: Readonly<Record<string, unknown>> | undefined;
  /** The sample action the file carries in `action`, as a preview body does. */
  readonly action: SampleAction | undefined;
  readonly diagnostics: readonly FamilyDiagnostic[];
  readonly source: SourceText;
}

/**
 * Checks a `POST /v1/grants` body, optionally with the `action` of a preview body, and reports
 * each error at its line and column (JSON is read as YAML, whose source positions it keeps);
 * policy errors point inside the policy string.
 */
export function checkGrantBody(text: string, file: string): CheckedGrant {
  const lines = new LineCounter();
  const source = new SourceText(file, text, lines);
  const doc = parseYamlDocument(text, { lineCounter: lines, prettyErrors: false });
  const fail = (diagnostics: FamilyDiagnostic[]): CheckedGrant => ({
    ok: false,
    grant: undefined,
    action: undefined,
    diagnostics: sortDiagnostics(diagnostics),
    source,
  });
  if (doc.errors.length > 0) {
    return fail(
      doc.errors.map((e) => ({
        code: "syntax",
        severity: "error",
        message: e.message
          .split("\n")[0]!
          .replace(/ at line \d+, column \d+.*$/, "")
          .toLowerCase(),
        file,
        range: source.range(e.pos[0], e.pos[1]),
      })),
    );
  }
  const data = doc.toJS() as unknown;
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    return fail([
      {
        code: "schema",
        severity: "error",
        message: "a grant must be an object with the fields of `POST /v1/grants`",
        file,
        range: source.range(0, 0),
      },
    ]);
  }
  const { action, ...grant } = data as Record<string, unknown>;
  const diagnostics: FamilyDiagnostic[] = validateGrantIssueBody(grant).map((e) => ({
    code: "schema",
    severity: "error",
    message: e.message,
    ...(e.help !== undefined ? { help: e.help } : {}),
    file,
    range: rangeOf(source, doc, e.path, e.at),
  }));
  if (action !== undefined && (action === null || typeof action !== "object" || typeof (action as { tool?: unknown }).tool !== "string")) {
    diagnostics.push({
      code: "schema",
      severity: "error",
      message: "`action` must be an object with a `tool`",
      file,
      range: rangeOf(source, doc, ["action"]),
    });
  }
  if (typeof grant["policy"] === "string") diagnostics.push(...checkFamilyPolicy(source, doc, grant["policy"], {}, ["policy"]));
  if (hasErrors(diagnostics)) return fail(diagnostics);
  return { ok: true, grant, action: action as SampleAction | undefined, diagnostics: sortDiagnostics(diagnostics), source };
}
