// The text v1 accepts, one rule for every string of every request on both stores: any Unicode text
// except U+0000 and lone surrogates. Neither can be stored faithfully (PostgreSQL refuses NUL in
// text and both in jsonb; a lone surrogate has no UTF-8 form, so a driver would store U+FFFD and
// the sealed record's hash would no longer match), so both are refused before anything is written.

/** Where a request holds text v1 does not store, and why. */
export interface TextFault {
  /** A JSON Pointer (RFC 6901) to the string, or to the object member whose name holds it. */
  readonly pointer: string;
  readonly reason: "nul" | "lone_surrogate";
  /** The UTF-16 offset of the offending character in the string. */
  readonly offset: number;
}

/** The first character of `text` that v1 does not store, or undefined when there is none. */
export function unstorableCharacter(text: string): { reason: TextFault["reason"]; offset: number } | undefined {
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit === 0) return { reason: "nul", offset: i };
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
    if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      i += 1;
      continue;
    }
    return { reason: "lone_surrogate", offset: i };
  }
  return undefined;
}

function pointerToken(name: string): string {
  return name.replace(/~/g, "~0").replace(/\//g, "~1");
}

/**
 * The first string in a parsed JSON value, member names included, that v1 does not store. The walk
 * keeps its own stack, so its depth is bounded only by the value (bodies are depth-checked first).
 */
export function findUnstorableText(value: unknown): TextFault | undefined {
  const stack: Array<{ value: unknown; pointer: string }> = [{ value, pointer: "" }];
  while (stack.length > 0) {
    const { value: current, pointer } = stack.pop()!;
    if (typeof current === "string") {
      const fault = unstorableCharacter(current);
      if (fault !== undefined) return { pointer: pointer === "" ? "/" : pointer, ...fault };
      continue;
    }
    if (current === null || typeof current !== "object") continue;
    const entries = Array.isArray(current) ? current.map((item, i) => [String(i), item] as const) : Object.entries(current);
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const [name, member] = entries[i]!;
      const at = `${pointer}/${pointerToken(name)}`;
      if (!Array.isArray(current)) {
        const fault = unstorableCharacter(name);
        if (fault !== undefined) return { pointer: at, ...fault };
      }
      stack.push({ value: member, pointer: at });
    }
  }
  return undefined;
}

/** The message of a fault, as a problem's `detail` gives it. */
export function textFaultMessage(fault: TextFault): string {
  const what = fault.reason === "nul" ? "U+0000 (NUL)" : "a lone surrogate";
  return `\`${fault.pointer}\` holds ${what} at offset ${fault.offset}; v1 stores any Unicode text but NUL and lone surrogates`;
}
