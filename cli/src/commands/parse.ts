// `authority parse`: a policy's syntax tree as JSON, for tools and for seeing how a policy groups.
import { parsePolicy } from "@agent-authority/language";
import { parseArgs } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { readPolicyArgument, reportPolicyErrors } from "../policy-input.js";

export const parseCommand: Command = {
  name: "parse",
  summary: "print a policy's syntax tree as JSON",
  usage: `authority parse POLICY

Parses POLICY (a .policy file, or \`-\` for standard input) and prints its syntax tree as JSON:
\`{"ast": …, "comments": […]}\`. Each node has a \`kind\` (int, string, bool, null, list, name, call,
unary, binary), its fields, and a \`span\` of UTF-16 offsets into the text; operators are grouped
by precedence, as the engine reads them. Nothing is type-checked: \`authority lint\` does that.

Exit status: 0 parsed, 1 the policy has a syntax error (shown on stderr), 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, {});
    const input = await readPolicyArgument(args.positionals, terminal);
    const parsed = parsePolicy(input.text);
    if (!parsed.ok) {
      reportPolicyErrors(input, terminal);
      return EXIT.failed;
    }
    const comments = parsed.comments.map((span) => ({ text: input.text.slice(span.start, span.end), span }));
    terminal.out.write(
      `${JSON.stringify({ ast: parsed.ast, comments }, ["ast", "comments", "kind", "value", "elements", "name", "path", "callee", "args", "op", "operand", "left", "right", "span", "start", "end", "text"], 2)}\n`,
    );
    return EXIT.ok;
  },
};
