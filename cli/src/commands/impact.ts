// `authority impact`: what a candidate version of a family would change in the decisions the
// server sealed for that family's grants (POST /v1/grant-families/{id}/impact).
import { option, parseArgs, flag, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { collectInputs } from "../files.js";
import { checkFile } from "../load.js";
import { formatText } from "../report.js";
import { request, serverTarget } from "../server-client.js";
import { paint } from "../terminal.js";
import type { GrantFamilyBody } from "@agent-authority/families";
import type { FamilyDiffResult } from "@agent-authority/analysis";
import { diffText } from "./diff.js";

interface Impact {
  readonly current_version: number | null;
  readonly candidate_version: number;
  readonly candidate_content_hash: string;
  readonly days: number;
  readonly replayed: number;
  readonly changed: number;
  readonly truncated?: boolean;
  readonly changes: readonly {
    ledger_id: string;
    grant_id: string;
    decided_at: string;
    tool: string;
    before: { outcome: string; decided_by: string | null };
    after: { outcome: string; decided_by: string | null; reason: string; mode?: string; answer?: string };
  }[];
  /** Absent from the answers of servers older than this field. */
  readonly candidate_modes?: readonly { mode: string; grants: number; replayed: number; enforce_refusals: number; refusals: number }[];
  readonly skipped: readonly { grant_id: string; decisions?: number; reason: string }[];
  /** Absent from the answers of servers older than this field. */
  readonly symbolic?: FamilyDiffResult;
}

export const impactCommand: Command = {
  name: "impact",
  summary: "replay a family's sealed decisions of the last N days under a candidate version",
  usage: `authority impact FILE [--days N] [--server URL] [--key KEY] [--format text|json] [--fail-on-change]

Compiles the family in FILE (the candidate, usually the version a pull request proposes), finds the
family of the same id on the server, and asks it to replay the sealed decisions of that family's
grants over the last N days under the candidate's terms. Prints every decision whose outcome would
change, and beside it the symbolic diff of the server's version and the candidate (as
\`authority diff\` compares two families): the replay says what would have changed in the past, the
diff what could change for any action. Nothing is written on the server.

  --days N            the window, 1 to 90 days (default 30)
  --server URL        the server (or AUTHORITY_SERVER)
  --key KEY           an issuer, approver, auditor or admin key (or AUTHORITY_KEY)
  --format FMT        text (default) or json (the server's answer)
  --fail-on-change    exit 1 when some outcome would change

Exit status: 0 done (with --fail-on-change: nothing would change), 1 the family has errors, is not
on the server, the server refused, or an outcome would change with --fail-on-change; 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { days: "string", server: "string", key: "string", format: "string", "fail-on-change": "boolean" });
    if (args.positionals.length !== 1) throw new UsageError("name one family file: `authority impact FILE`");
    const format = option(args, "format") ?? "text";
    if (format !== "text" && format !== "json") throw new UsageError("`--format` is `text` or `json`");
    const rawDays = option(args, "days") ?? "30";
    const days = Number(rawDays);
    if (!/^[0-9]{1,2}$/.test(rawDays) || days < 1 || days > 90) throw new UsageError("`--days` is a whole number from 1 to 90");
    const target = serverTarget(args, terminal.env, true);
    const [file] = collectInputs(terminal.cwd, args.positionals, ["family"]).map(checkFile);
    if (file === undefined) throw new UsageError(`\`${args.positionals[0]}\` is not a family file`);
    if (!file.family?.ok) {
      terminal.err.write(formatText([file], paint(false)));
      return EXIT.failed;
    }
    const body = file.family.body!;
    const found = await request(target, "GET", `/grant-families?name=${encodeURIComponent(body.id)}`);
    if (!found.ok) return fail(terminal.err, found.message);
    const family = ((found.body as { families?: { id: string }[] }).families ?? [])[0];
    if (family === undefined) return fail(terminal.err, `family \`${body.id}\` is not on the server; push it first`);
    const answer = await request(target, "POST", `/grant-families/${family.id}/impact`, { family: body, days });
    if (!answer.ok) return fail(terminal.err, answer.message);
    const impact = answer.body as Impact;
    // A server of this version answers the symbolic diff itself; an older one is diffed here.
    const symbolic = impact.symbolic ?? (await symbolicDiff(family as unknown as GrantFamilyBody, body));
    if (format === "json") terminal.out.write(`${JSON.stringify({ ...impact, symbolic }, null, 2)}\n`);
    else terminal.out.write(render(body.id, family.id, impact, paint(terminal.color), symbolic));
    return flag(args, "fail-on-change") && impact.changed > 0 ? EXIT.failed : EXIT.ok;
  },
};

function fail(err: { write(text: string): void }, message: string): number {
  err.write(`authority impact: ${message}\n`);
  return EXIT.failed;
}

/**
 * The symbolic diff of the server's current version and the candidate, beside the replay: the
 * replay says what would have changed in the past, the diff what could change for any action.
 */
async function symbolicDiff(current: GrantFamilyBody, candidate: GrantFamilyBody): Promise<FamilyDiffResult> {
  const analysis = await import("@agent-authority/analysis");
  const analyzer = await analysis.createAnalyzer();
  try {
    return await analysis.diffFamilies(analyzer, current, candidate);
  } finally {
    await analyzer.close();
  }
}

function render(name: string, id: string, impact: Impact, p: ReturnType<typeof paint>, symbolic: FamilyDiffResult): string {
  const lines = [
    `${name} (\`${id}\`): candidate v${impact.candidate_version} (${impact.candidate_content_hash.slice(0, 19)}…) against v${impact.current_version ?? "-"}, sealed decisions of the last ${impact.days} days`,
    ...diffText(symbolic)
      .trimEnd()
      .split("\n")
      .map((line, i) => (i === 0 ? `  symbolic diff, for any action: ${line}` : `  ${line}`)),
  ];
  for (const c of impact.changes) {
    const gate = c.after.decided_by === null ? "" : ` (${c.after.decided_by})`;
    // The outcome is enforce's; a grant the candidate runs in another mode says what it answers there.
    const answered =
      c.after.mode === undefined || c.after.mode === "enforce" ? "" : ` (in \`${c.after.mode}\` it answers ${c.after.answer})`;
    lines.push(
      `  ${p.yellow("changes")} ${c.ledger_id} ${c.decided_at} \`${c.tool}\` on ${c.grant_id}: ${c.before.outcome} -> ${c.after.outcome}${gate}${answered}: ${c.after.reason}`,
    );
  }
  for (const m of impact.candidate_modes ?? []) lines.push(`  ${modeLine(m)}`);
  for (const s of impact.skipped)
    lines.push(`  ${p.red("skipped")} ${s.grant_id}${s.decisions === undefined ? "" : ` (${s.decisions} decisions)`}: ${s.reason}`);
  if (impact.truncated === true) lines.push("  the window holds more decisions than one preview replays; the counts cover the oldest ones");
  lines.push(`${impact.replayed} replayed, ${impact.changed} would change under \`enforce\``);
  return `${lines.join("\n")}\n`;
}

/** One mode the candidate runs grants in: what enforce would refuse and what that mode itself refuses. */
function modeLine(m: NonNullable<Impact["candidate_modes"]>[number]): string {
  const grants = `${m.grants} grant${m.grants === 1 ? "" : "s"}`;
  if (m.mode === "enforce")
    return `the candidate runs ${grants} in \`enforce\`: it refuses ${m.enforce_refusals} of ${m.replayed} replayed decisions`;
  return `the candidate runs ${grants} in \`${m.mode}\`, which refuses only unusable grants (${m.refusals} of ${m.replayed} replayed decisions); \`enforce\` would refuse ${m.enforce_refusals}`;
}
