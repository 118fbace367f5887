// Grant families on the server (docs/families.md): push a reviewed version, list and read them,
// instantiate one through the ordinary issue path, and preview a candidate version's impact on the
// sealed decisions of the family's grants. The family compiler decides what a family is; this
// module recomputes the content hash, keeps versions and records instances.

import { FAMILY_LIMITS, type Grant, type GrantIssueBody } from "@agent-authority/api";
import {
  compileFamily,
  familyContentHash,
  familyTextAt,
  instantiateFamily,
  type FamilyDiagnostic,
  type GrantFamilyBody,
} from "@agent-authority/families";
import { Refusal } from "../common/index.js";
import { newId } from "../../ids.js";
import type { FamilyVersionRow } from "../../store/families/index.js";
import type { Page } from "../../store/core/index.js";
import type { Caller, ServiceContext } from "../common/index.js";
import { issueGrant } from "../grants/index.js";
import { familyBody } from "../seal/index.js";
import { iso } from "../common/index.js";

export interface FamilyView extends Record<string, unknown> {
  readonly id: string;
  readonly name: string;
  readonly version: number;
  readonly content_hash: string;
}

/** The answer for one stored version: the body as reviewed, under the server's id. */
export function familyView(row: FamilyVersionRow): FamilyView {
  const { id: name, content_hash: _hash, ...body } = familyBody(row);
  return {
    ...body,
    id: row.id,
    name,
    version: row.version,
    content_hash: row.content_hash,
    pushed_at: iso(row.pushed_at),
    pushed_by: row.pushed_by,
  };
}

/** The text a client sent and where in it the family is (`[]`: the whole body; `["family"]`: that member). */
export interface SentFamily {
  readonly text: string;
  readonly path: readonly string[];
}

/** One compiler diagnostic as the API answers it. */
function diagnosticView(d: FamilyDiagnostic) {
  return {
    code: d.code,
    severity: d.severity,
    message: d.message,
    ...(d.help === undefined ? {} : { help: d.help }),
    ...(d.field === undefined ? {} : { field: d.field }),
    line: d.range.start.line,
    column: d.range.start.column,
  };
}

const errorsOf = (text: string) => compileFamily(text, "body").diagnostics.filter((d) => d.severity === "error");

/**
 * A family's YAML source compiled as `authority compile` compiles it, for a client that holds the
 * file a reviewer reads (the console's review page) rather than the compiled JSON. An error refuses
 * it with every error's line and column in that text.
 */
export function familyFromSource(source: string): GrantFamilyBody {
  const compiled = compileFamily(source, "source");
  const errors = compiled.diagnostics.filter((d) => d.severity === "error");
  if (compiled.body === undefined || errors.length > 0) {
    const first = errors[0];
    const detail =
      first === undefined
        ? "the source does not compile"
        : `${first.code} at line ${first.range.start.line}, column ${first.range.start.column}: ${first.message}`;
    throw new Refusal("invalid_family", detail, { diagnostics: errors.map(diagnosticView) });
  }
  return compiled.body;
}

/**
 * Everything the compiler checks beyond the schema (placeholders, bounds of defaults and examples,
 * the policy, the instantiated grant's shape, the stated hash), run on the body itself: JSON is
 * YAML, so the server accepts exactly what `authority compile` accepts. The verdict is the one on
 * the validated body; the positions are those of the same errors in the text the client sent
 * (`sent`), when that text compiles to the same errors, else of the server's own copy.
 */
export function checkFamilyBody(body: GrantFamilyBody, sent?: SentFamily): void {
  const errors = errorsOf(JSON.stringify(body, null, 1));
  if (errors.length === 0) return;
  const masked = sent === undefined ? undefined : familyTextAt(sent.text, sent.path);
  const inSent = masked === undefined ? [] : errorsOf(masked);
  const keys = (list: readonly FamilyDiagnostic[]) =>
    list
      .map((d) => `${d.code}\n${d.message}`)
      .sort()
      .join("\n\n");
  const same = inSent.length > 0 && keys(inSent) === keys(errors);
  const located = same ? inSent : errors;
  throw new Refusal("invalid_family", `${located[0]!.code}: ${located[0]!.message}`, { diagnostics: located.map(diagnosticView) });
}

/**
 * INVARIANT (family-hash-pinned): the stored hash is the server's own, never the body's word for
 * it. A body may leave `content_hash` out (a family written by hand); one it states must match.
 */
function pinnedHash(body: GrantFamilyBody): string {
  const hash = familyContentHash(body as unknown as Record<string, unknown>);
  if (body.content_hash !== undefined && body.content_hash !== hash) {
    throw new Refusal("invalid_family", `\`content_hash\` is \`${body.content_hash}\` but the content hashes to \`${hash}\``, {
      content_hash: hash,
    });
  }
  return hash;
}

/**
 * `POST /v1/grant-families`. The same content as the latest version answers that version (200);
 * new content needs a version above the latest (201), else 409; a version number is never reused.
 */
export async function pushFamily(
  ctx: ServiceContext,
  caller: Caller,
  body: GrantFamilyBody,
  sentText?: string,
): Promise<{ created: boolean; family: FamilyView }> {
  checkFamilyBody(body, sentText === undefined ? undefined : { text: sentText, path: [] });
  const hash = pinnedHash(body);
  const now = ctx.now();
  return ctx.store.transaction(async (tx) => {
    const families = tx.familyPath();
    await families.lockName(body.id);
    const latest = await families.latestByName(body.id);
    if (latest !== undefined && latest.content_hash === hash) return { created: false, family: familyView(latest) };
    if (latest !== undefined && body.version <= latest.version) {
      throw new Refusal(
        "family_version_conflict",
        `family \`${body.id}\` changed since version ${latest.version} (\`${latest.content_hash}\`); raise \`version\` above ${latest.version}`,
        { family_id: latest.id, latest_version: latest.version, latest_content_hash: latest.content_hash, content_hash: hash },
      );
    }
    const row: FamilyVersionRow = {
      id: latest?.id ?? newId("fam", now),
      name: body.id,
      version: body.version,
      content_hash: hash,
      body: JSON.stringify({ ...body, content_hash: hash }),
      pushed_at: now,
      pushed_by: caller.identity,
    };
    await families.insertVersion(row);
    return { created: true, family: familyView(row) };
  });
}

export async function listFamilies(
  ctx: ServiceContext,
  name: string | undefined,
  page: Page,
): Promise<{ families: FamilyView[]; next_after: string | null }> {
  const rows = await ctx.store.familyPath().listLatest({ name }, page.after, page.limit);
  return { families: rows.map(familyView), next_after: rows.length === page.limit ? rows[rows.length - 1]!.id : null };
}

/** `?version=` as a positive integer, or undefined when absent. */
export function versionQuery(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const version = Number(raw);
  if (!/^[1-9][0-9]{0,6}$/.test(raw) || !Number.isSafeInteger(version))
    throw new Refusal("invalid_query", "`version` must be a positive integer");
  return version;
}

export async function familyVersion(ctx: ServiceContext, id: string, version: number | undefined): Promise<FamilyVersionRow> {
  const row = await ctx.store.familyPath().getVersion(id, version);
  if (row === undefined)
    throw new Refusal("family_not_found", version === undefined ? `no family \`${id}\`` : `no version ${version} of family \`${id}\``);
  return row;
}

/** `GET /v1/grant-families/{id}`: one version (the latest by default), with the family's version numbers. */
export async function getFamily(ctx: ServiceContext, id: string, version: number | undefined): Promise<FamilyView> {
  const row = await familyVersion(ctx, id, version);
  const versions = await ctx.store.familyPath().versionNumbers(id, FAMILY_LIMITS.versionsListedMax);
  return { ...familyView(row), versions };
}

/**
 * `POST /v1/grant-families/{id}/instantiate`: the parameters are checked against the reviewed
 * version's bounds (every problem listed), then the grant goes through the one issue path, with
 * its certification check, recording the family and version it came from.
 */
export async function instantiate(
  ctx: ServiceContext,
  caller: Caller,
  id: string,
  body: { parameters?: Record<string, unknown>; version?: number },
): Promise<Grant & { warnings?: unknown[] }> {
  const row = await familyVersion(ctx, id, body.version);
  const family = familyBody(row);
  const parameters = body.parameters ?? {};
  const result = instantiateFamily(family, parameters);
  if (!result.ok) {
    const problems = [
      ...result.parameterProblems.map((p) => ({ parameter: p.parameter, code: p.code, message: p.message })),
      ...result.grantErrors.map((e) => ({ field: `grant.${e.path.join(".")}`, code: "grant-shape", message: e.message })),
    ];
    throw new Refusal("family_parameters_invalid", problems.map((p) => p.message).join("; "), { problems });
  }
  return issueGrant(ctx, caller, result.value.grant as unknown as GrantIssueBody, {
    family_id: row.id,
    family_version: row.version,
    parameters,
  });
}
