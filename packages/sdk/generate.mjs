// Generates src/generated/types.ts from the JSON Schemas of @agent-authority/api.
// Run after building the api package: `node packages/sdk/generate.mjs` writes the file,
// `node packages/sdk/generate.mjs --check` exits 1 when the committed file has drifted.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Where the generated module lives, relative to this script. */
export const generatedPath = fileURLToPath(new URL("./src/generated/types.ts", import.meta.url));

const header = [
  "// Types of the v1 request and response bodies, generated from the JSON Schemas of @agent-authority/api.",
  "// Do not edit: run `node packages/sdk/generate.mjs` after the schemas change (a test fails on drift).",
  "",
].join("\n");

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Renders the whole module from the api package's exports; the output depends on nothing else. */
export function renderTypes(api) {
  const named = collectSchemas(api);
  const blocks = [...named.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, schema]) => renderDeclaration(name, schema));
  const codes = Object.keys(api.PROBLEM_CODES ?? {}).sort();
  if (codes.length > 0) {
    blocks.push(
      `/** The stable problem codes of v1; branch on these, never on a title or detail. */\nexport type ProblemCode =\n${codes.map((code) => `  | ${JSON.stringify(code)}`).join("\n")};\n`,
    );
  }
  return `${header}\n${blocks.join("\n")}`;
}

/** Every schema with an `$id`, and every exported `…Schema` constant, named by `$id` or by its export name. */
function collectSchemas(api) {
  const named = new Map();
  for (const schema of api.allSchemas ?? []) {
    if (typeof schema?.$id === "string") named.set(schema.$id, schema);
  }
  for (const [exportName, value] of Object.entries(api)) {
    if (!exportName.endsWith("Schema") || !isSchema(value)) continue;
    const name = typeof value.$id === "string" ? value.$id : pascal(exportName.slice(0, -"Schema".length));
    if (!named.has(name)) named.set(name, value);
  }
  return named;
}

function isSchema(value) {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    ("type" in value || "$ref" in value || "oneOf" in value || "anyOf" in value || "allOf" in value || "enum" in value)
  );
}

function pascal(name) {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

function renderDeclaration(name, schema) {
  const doc = comment(schema.description, "");
  const own = ownObject(schema);
  if (own !== undefined && !hasComposition(schema)) return `${doc}export interface ${name} ${own}\n`;
  return `${doc}export type ${name} = ${renderType(schema, "")};\n`;
}

function hasComposition(schema) {
  return Array.isArray(schema.allOf) || Array.isArray(schema.oneOf) || Array.isArray(schema.anyOf);
}

/** The object literal type of a schema's own properties, or undefined when it declares none. */
function ownObject(schema, indent = "") {
  if (schema.properties === undefined) return undefined;
  const required = new Set(schema.required ?? []);
  const inner = `${indent}  `;
  const lines = Object.entries(schema.properties).map(([key, property]) => {
    const name = identifier.test(key) ? key : JSON.stringify(key);
    const optional = required.has(key) ? "" : "?";
    return `${comment(describe(property), inner)}${inner}readonly ${name}${optional}: ${renderType(property, inner)};`;
  });
  return `{\n${lines.join("\n")}\n${indent}}`;
}

/** A property's doc comment: its description and, when it has one, its default. */
function describe(schema) {
  const parts = [];
  if (typeof schema.description === "string") parts.push(schema.description);
  if (schema.default !== undefined) parts.push(`Default: \`${JSON.stringify(schema.default)}\`.`);
  return parts.length > 0 ? parts.join(" ") : undefined;
}

function comment(text, indent) {
  if (typeof text !== "string" || text.length === 0) return "";
  return `${indent}/** ${text.replaceAll("*/", "*\\/")} */\n`;
}

function renderType(schema, indent) {
  if (schema === true || schema === undefined || (typeof schema === "object" && Object.keys(schema).length === 0)) return "unknown";
  if (schema === false) return "never";
  if (typeof schema.$ref === "string") return refName(schema.$ref);
  if ("const" in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));
  if (Array.isArray(schema.allOf)) {
    // Members without a static shape (`if`/`then` conditionals) may allow further members: keep them open.
    const rendered = schema.allOf.map((member) => renderType(member, indent));
    const members = rendered.filter((member) => member !== "unknown");
    const own = ownObject(schema, indent);
    if (own !== undefined) members.push(own);
    if (members.length < rendered.length + (own === undefined ? 0 : 1) && schema.additionalProperties !== false) {
      members.push("{ readonly [member: string]: unknown }");
    }
    return members.length === 0 ? "unknown" : [...new Set(members)].join(" & ");
  }
  if (Array.isArray(schema.oneOf) || Array.isArray(schema.anyOf)) {
    const members = schema.oneOf ?? schema.anyOf;
    // An object whose alternatives only say which of its own members are required (exactly one of
    // two, say): each alternative is the object with those members required.
    if (schema.properties !== undefined && members.every(onlyRequires)) {
      return union(members.map((member) => ownObject({ ...schema, required: [...(schema.required ?? []), ...member.required] }, indent)));
    }
    return union(members.map((member) => renderType(member, indent)));
  }
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  if (types.length === 0) return ownObject(schema, indent) ?? "unknown";
  return union(types.map((type) => renderPrimitive(type, schema, indent)));
}

/** Whether an alternative only requires members (naming them in `properties` as `true`, as strict mode asks). */
function onlyRequires(member) {
  if (typeof member !== "object" || member === null || !Array.isArray(member.required)) return false;
  const properties = member.properties ?? {};
  return (
    Object.keys(member).every((key) => key === "required" || key === "properties") && Object.values(properties).every((p) => p === true)
  );
}

/** A union without repeated members; `unknown` absorbs every other member. */
function union(members) {
  const unique = [...new Set(members)];
  return unique.includes("unknown") ? "unknown" : unique.join(" | ");
}

function renderPrimitive(type, schema, indent) {
  switch (type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      const item = renderType(schema.items, indent);
      return /^[A-Za-z0-9_]+$/.test(item) ? `readonly ${item}[]` : `ReadonlyArray<${item}>`;
    }
    case "object": {
      const own = ownObject(schema, indent);
      if (own !== undefined) return own;
      const values = typeof schema.additionalProperties === "object" ? renderType(schema.additionalProperties, indent) : "unknown";
      return `{ readonly [key: string]: ${values} }`;
    }
    default:
      return "unknown";
  }
}

/** `$ref` values are `$id`s (`"Grant"`) or JSON pointers into definitions (`"#/$defs/Grant"`). */
function refName(ref) {
  const last = ref.split("/").pop();
  return identifier.test(last) ? last : "unknown";
}

function literal(value) {
  return value === null ? "null" : JSON.stringify(value);
}

async function main(argv) {
  const api = await import("@agent-authority/api");
  const text = renderTypes(api);
  if (argv.includes("--check")) {
    let committed = "";
    try {
      committed = readFileSync(generatedPath, "utf8");
    } catch {
      committed = "";
    }
    if (committed !== text) {
      process.stderr.write("src/generated/types.ts differs from the schemas: run `node packages/sdk/generate.mjs`\n");
      return 1;
    }
    return 0;
  }
  writeFileSync(generatedPath, text);
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
