// Writes cli/schemas/family.schema.json from the built CLI (run `npx tsc -b` first); a test keeps it current.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { FAMILY_SCHEMA_FILE, familyYamlSchema } from "../dist/family-schema.js";

const target = join(dirname(fileURLToPath(import.meta.url)), "..", FAMILY_SCHEMA_FILE);
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, `${JSON.stringify(familyYamlSchema(), null, 2)}\n`);
