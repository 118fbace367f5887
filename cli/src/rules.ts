// What each diagnostic code means, in words, and where the docs explain it: the rules of a SARIF log.
import type { DIAGNOSTIC_CODES } from "@agent-authority/language";

/** Where every rule's help is, in words: the project owns no web address, so the help names the page of its docs. */
const DOCS_PLACE = "of the Agent Authority repository";

export interface RuleText {
  readonly short: string;
  readonly full: string;
  readonly help: string;
}

const POLICY_HELP = `See the section Diagnostics of docs/policy-language.md ${DOCS_PLACE}.`;
const FAMILY_HELP = `See the section Errors of docs/families.md ${DOCS_PLACE}.`;

/** Each policy-language code (and the codes only the solver proves in `authority lint`): a short description, and a full one. */
const POLICY_RULES: Readonly<
  Record<(typeof DIAGNOSTIC_CODES)[number] | "always-allows" | "redundant-condition", readonly [string, string]>
> = {
  "policy-too-long": ["Policy too long", "The policy text is longer than the language's limit of 4,096 bytes."],
  "nesting-too-deep": ["Policy nested too deeply", "Parentheses, brackets and operators nest deeper than the language allows."],
  "list-too-long": ["List too long", "A list has more elements than the language allows."],
  "integer-out-of-range": ["Integer out of range", "An integer literal is larger than the largest safe integer, 2^53 - 1."],
  "approver-search-too-large": [
    "Approver search too large",
    "Deciding who may approve this policy could take more work than the engine allows.",
  ],
  "policy-too-costly": [
    "Policy too costly",
    "At worst, evaluating this policy could take more work units than one evaluation's budget of 65,536.",
  ],
  "unexpected-character": [
    "Unexpected character",
    "A character that starts no token of the policy language, such as a lone `=` or a single quote.",
  ],
  "unterminated-string": ["Unterminated string", "A string literal has no closing double quote on its line."],
  "invalid-escape": ["Invalid escape", "A string literal holds an escape the language does not define."],
  "unexpected-token": ["Unexpected token", "A token stands where the grammar does not allow it, such as `and` for `&&`."],
  "unexpected-end": ["Unexpected end of policy", "The policy ends too soon, for example inside an unclosed parenthesis."],
  "unknown-name": ["Unknown name", "A name that is not in the decision environment."],
  "unknown-field": ["Unknown field", "A field of a name other than `args`, or `args` without a field."],
  "unknown-function": ["Unknown function", "A call of a function the language does not have."],
  "wrong-arity": ["Wrong number of arguments", "A function called with the wrong number of arguments."],
  "type-mismatch": ["Type mismatch", "An operand of the wrong type, or a policy that is not a condition."],
  "list-element-type": ["List element type", "A list literal whose elements are of several types, or of a type lists do not hold."],
  "approver-use": [
    "Approver used other than by comparison",
    "`approver` may only be compared, so that an approval gate can be decided exactly.",
  ],
  "runtime-type": ["Run-time type error", "A value has a type the operation does not take; the policy refuses."],
  "integer-overflow": ["Integer overflow", "Arithmetic leaves the safe integer range; the policy refuses."],
  "value-too-deep": ["Value nested too deeply", "A dynamic value nests deeper than the language allows; the policy refuses."],
  "cost-exceeded": ["Cost budget exceeded", "An evaluation used up its budget of work units; the policy refuses."],
  "invalid-path": [
    "Path refused",
    "A path function refused its input (relative, escaped, NUL, backslash or too long); the policy refuses.",
  ],
  "invalid-url": [
    "URL refused",
    "A URL function refused its input (not http(s)/ws(s), userinfo, hidden characters, empty segments or labels); the policy refuses.",
  ],
  "constant-condition": ["Constant condition", "A condition whose value never depends on the action."],
  "redundant-disjunct": ["Redundant alternative", "An alternative of `||` that never changes the outcome."],
  "never-allows": ["Policy never allows", "Some conditions of the policy contradict each other, so it never allows."],
  "always-allows": ["Policy always allows", "The solver proved that every action, approver included, satisfies the policy."],
  "redundant-condition": ["Redundant condition", "The solver proved that removing this operand of `&&` or `||` changes no decision."],
  "impossible-comparison": ["Impossible comparison", "A comparison no value of its name can satisfy, such as `hour_utc > 23`."],
  "duplicate-list-entry": ["Duplicate list entry", "A list literal holds the same value twice."],
  "approver-unsatisfiable": ["Approver condition unsatisfiable", "No approver can satisfy the condition on `approver`."],
  "hidden-character": [
    "Hidden character",
    "A character that is invisible or changes how the text around it reads (bidi control, zero-width, line separator) in a string or comment.",
  ],
  "mixed-script": ["Mixed-script word", "A word in a string mixes letters of look-alike scripts, such as a Cyrillic `а` in a Latin word."],
};

/** Each family code (without the `policy/` prefix), and the families of codes by their prefix. */
const FAMILY_RULES: Readonly<Record<string, readonly [string, string]>> = {
  schema: ["Family does not fit the schema", "An unknown field, a field of the wrong type, or a missing field of the family."],
  "grant-shape": ["Grant shape", "The grant a sample instantiation yields is not a valid grant."],
  "placeholder-unknown": ["Unknown placeholder", "A `${name}` placeholder names no declared parameter."],
  "placeholder-in-string": ["Placeholder inside a policy string", "A placeholder written inside a string literal of the policy."],
  "parameter-bounds": ["Parameter out of bounds", "A parameter's declaration, default or example is out of its bounds."],
  "parameter-type": ["Parameter type", "A parameter's default or example is not of its type."],
  "parameter-pattern": [
    "Parameter pattern",
    "A parameter's pattern is outside the accepted RE2 syntax or its limits, or could cost an instantiation too much work.",
  ],
  "parameter-unused": ["Unused parameter", "A declared parameter that no placeholder uses."],
  "examples-missing": ["No examples", "The family has no examples for `authority test` to check."],
  "content-hash-mismatch": ["Content hash mismatch", "The stated `content_hash` differs from the hash of the content."],
  "family-too-large": ["Family file too large", "The family file is larger than the compiler reads."],
};

/** The words and help page of a code as `lint` reports it (`policy/unknown-name`, `yaml/bad-indent`, `schema`, …). */
export function ruleText(code: string): RuleText {
  const policy = code.startsWith("policy/") ? (POLICY_RULES as Record<string, readonly [string, string]>)[code.slice(7)] : undefined;
  if (policy !== undefined) return { short: policy[0], full: policy[1], help: POLICY_HELP };
  const family = Object.hasOwn(FAMILY_RULES, code) ? FAMILY_RULES[code] : undefined;
  if (family !== undefined) return { short: family[0], full: family[1], help: FAMILY_HELP };
  if (code.startsWith("yaml/"))
    return { short: "YAML syntax", full: `The family file is not valid YAML (${code.slice(5).replace(/-/g, " ")}).`, help: FAMILY_HELP };
  if (code.startsWith("example/"))
    return {
      short: "Example does not instantiate",
      full: `An example's parameters do not instantiate the family (${code.slice(8).replace(/-/g, " ")}).`,
      help: FAMILY_HELP,
    };
  return { short: code.replace(/[/-]/g, " "), full: `The diagnostic \`${code}\`.`, help: FAMILY_HELP };
}
