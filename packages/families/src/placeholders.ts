// `${param}` placeholders: finding them, and substituting values into a grant template.
import { ownValue, setOwn } from "./own.js";
import { PLACEHOLDER_PATTERN, type ParameterValue } from "./schema.js";

export interface PlaceholderUse {
  readonly name: string;
  /** Offsets of `${` and one past `}` inside the string that holds it. */
  readonly start: number;
  readonly end: number;
}

export function placeholdersIn(text: string): PlaceholderUse[] {
  const uses: PlaceholderUse[] = [];
  for (const match of text.matchAll(new RegExp(PLACEHOLDER_PATTERN, "g"))) {
    uses.push({ name: match[1]!, start: match.index, end: match.index + match[0].length });
  }
  return uses;
}

/** The policy-language literal of a value: a quoted, escaped string, a decimal integer, or a boolean. */
export function policyLiteral(value: ParameterValue): string {
  if (typeof value === "string") return JSON.stringify(value);
  return String(value);
}

/** A text with placeholders replaced, and a map from offsets in it back to offsets in the template. */
export interface Substituted {
  readonly text: string;
  templateOffset(offset: number): number;
}

/**
 * Replaces every placeholder in a text. In a policy each value becomes a literal of the language,
 * so a parameter can never change the structure of the expression; elsewhere it is inserted as
 * text. An offset inside an inserted value maps to the start of its placeholder.
 */
export function substituteText(template: string, values: Readonly<Record<string, ParameterValue>>, as: "policy" | "text"): Substituted {
  const segments: { from: number; to: number; templateFrom: number; literal: boolean }[] = [];
  let text = "";
  let cursor = 0;
  for (const use of placeholdersIn(template)) {
    const value = ownValue(values, use.name);
    if (value === undefined) continue;
    segments.push({ from: text.length, to: text.length + (use.start - cursor), templateFrom: cursor, literal: false });
    text += template.slice(cursor, use.start);
    const inserted = as === "policy" ? policyLiteral(value) : String(value);
    segments.push({ from: text.length, to: text.length + inserted.length, templateFrom: use.start, literal: true });
    text += inserted;
    cursor = use.end;
  }
  segments.push({ from: text.length, to: text.length + (template.length - cursor), templateFrom: cursor, literal: false });
  text += template.slice(cursor);
  return {
    text,
    templateOffset(offset: number): number {
      for (const segment of segments) {
        if (offset >= segment.from && offset < segment.to) {
          return segment.literal ? segment.templateFrom : segment.templateFrom + (offset - segment.from);
        }
      }
      return template.length;
    },
  };
}

/**
 * The grant a template yields for a set of values. A string that is exactly one placeholder takes
 * the parameter's value with its type; a string with placeholders among other text interpolates
 * them; the `policy` field interpolates them as policy literals.
 */
export function substituteGrant(template: unknown, values: Readonly<Record<string, ParameterValue>>, key?: string): unknown {
  if (typeof template === "string") {
    if (key === "policy") return substituteText(template, values, "policy").text;
    const whole = /^\$\{([^}]*)\}$/.exec(template);
    const value = whole === null ? undefined : ownValue(values, whole[1]!);
    if (value !== undefined) return value;
    return substituteText(template, values, "text").text;
  }
  if (Array.isArray(template)) return template.map((item) => substituteGrant(item, values));
  if (template !== null && typeof template === "object") {
    const out: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(template)) setOwn(out, name, substituteGrant(value, values, name));
    return out;
  }
  return template;
}

/**
 * Placeholders written inside a string literal of a policy (`"${team}-x"`). A placeholder in a
 * policy stands for a whole literal, so these would be substituted as quoted text inside quotes;
 * the compiler reports them instead.
 */
export function placeholdersInPolicyStrings(template: string): PlaceholderUse[] {
  const inside: PlaceholderUse[] = [];
  const uses = placeholdersIn(template);
  let inString = false;
  for (let i = 0; i < template.length; i += 1) {
    const ch = template[i];
    if (inString && ch === "\\") {
      i += 1;
    } else if (ch === '"') {
      inString = !inString;
    } else if (inString && ch === "$") {
      const use = uses.find((u) => u.start === i);
      if (use !== undefined) inside.push(use);
    }
  }
  return inside;
}
