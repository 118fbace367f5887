// JSON Pointers (RFC 6901): where an amount, a currency, a policy argument or a cost is found.

/** A parsed pointer: its reference tokens, unescaped. The empty pointer `""` is the whole value. */
export type JsonPointer = readonly string[];

/** Parses a pointer; answers an error message (lower case) when the text is not one. */
export function parsePointer(text: string, tokensMax: number): JsonPointer | string {
  if (text === "") return [];
  if (!text.startsWith("/")) return `a JSON Pointer starts with \`/\`, not \`${text.slice(0, 1)}\``;
  const raw = text.slice(1).split("/");
  if (raw.length > tokensMax) return `a JSON Pointer has at most ${tokensMax} tokens`;
  const tokens: string[] = [];
  for (const token of raw) {
    if (/~(?![01])/.test(token)) return `\`~\` in a JSON Pointer is written \`~0\`, and \`/\` as \`~1\``;
    tokens.push(token.replace(/~1/g, "/").replace(/~0/g, "~"));
  }
  return tokens;
}

/** The value at the pointer, or `undefined` when some step does not exist. */
export function resolvePointer(value: unknown, pointer: JsonPointer): unknown {
  let current: unknown = value;
  for (const token of pointer) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
      current = current[Number(token)];
    } else if (typeof current === "object" && current !== null) {
      if (!Object.hasOwn(current, token)) return undefined;
      current = (current as Record<string, unknown>)[token];
    } else {
      return undefined;
    }
  }
  return current;
}

/** The pointer written back as text, for messages. */
export function pointerText(pointer: JsonPointer): string {
  return pointer.map((token) => `/${token.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}
