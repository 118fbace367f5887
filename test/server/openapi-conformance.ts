// Every response the API suites receive, checked against the OpenAPI document the server serves,
// with a validator of our own (Ajv 2020 over the document's own component schemas): an answer
// whose status, media type or body the document does not describe is a violation, so the document
// cannot drift from the server. The test harnesses record into a `ResponseRecorder` and check it
// when their server closes.

import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

/** One answer as a client saw it. */
export interface RecordedResponse {
  readonly method: string;
  /** The path below the base URL (`/grants/grt_…`), without the query. */
  readonly path: string;
  readonly status: number;
  readonly contentType: string | null;
  readonly body: unknown;
  readonly allow: string | null;
}

/** The parts of an OpenAPI document the checks read; the rest of it is left unread. */
interface MediaObject {
  readonly schema?: { readonly $ref?: string; readonly [keyword: string]: unknown };
}
interface ResponseObject {
  readonly content?: Readonly<Record<string, MediaObject>>;
}
interface Operation {
  readonly responses?: Readonly<Record<string, ResponseObject>>;
}
type PathItem = { readonly [method in (typeof METHODS)[number]]?: Operation };
interface OpenApiDocument {
  readonly paths: Readonly<Record<string, PathItem>>;
  readonly components?: { readonly responses?: Readonly<Record<string, ResponseObject>>; readonly [section: string]: unknown };
}

interface Template {
  readonly template: string;
  readonly pattern: RegExp;
  readonly item: PathItem;
}

function parameterCount(template: string): number {
  return template.split("{").length - 1;
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/** The validator of one document: which operation answers a request, and whether an answer fits it. */
export class OpenApiConformance {
  readonly #doc: OpenApiDocument;
  readonly #ajv = new Ajv2020({ strict: false, allErrors: false, allowUnionTypes: true, validateFormats: false });
  readonly #templates: Template[];
  readonly #validators = new Map<string, ValidateFunction>();

  constructor(doc: OpenApiDocument) {
    this.#doc = doc;
    // The document itself is the schema resource, so `#/components/schemas/…` references resolve in it.
    this.#ajv.addSchema({ $id: "openapi", components: doc.components }, "openapi");
    this.#templates = Object.entries(doc.paths)
      .map(([template, item]) => ({
        template,
        item,
        // A literal segment beats a parameter: `/grants/pending` is not `/grants/{grant_id}`.
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[a-z_]+\}/g, "[^/]+")}/?$`),
      }))
      .sort((a, b) => parameterCount(a.template) - parameterCount(b.template));
  }

  #validator(ref: string): ValidateFunction {
    let validate = this.#validators.get(ref);
    if (validate === undefined) {
      validate = this.#ajv.compile({ $ref: `openapi${ref}` });
      this.#validators.set(ref, validate);
    }
    return validate;
  }

  /** The document's response object for a status of an operation, or a component response. */
  #responseFor(r: RecordedResponse): { where: string; response: ResponseObject } | string {
    const matching = this.#templates.filter((t) => t.pattern.test(r.path));
    const components = this.#doc.components?.responses ?? {};
    if (matching.length === 0) {
      return components["RouteNotFound"] !== undefined && r.status === 404
        ? { where: "components.responses.RouteNotFound", response: components["RouteNotFound"] }
        : `${r.method} ${r.path}: no path of the document matches, and ${r.status} is not the documented answer to an unknown route`;
    }
    const method = r.method.toLowerCase() as (typeof METHODS)[number];
    const withMethod = matching.find((t) => t.item[method] !== undefined);
    if (withMethod === undefined) {
      const allowed = METHODS.filter((m) => matching.some((t) => t.item[m] !== undefined)).map((m) => m.toUpperCase());
      if (r.status !== 405 || components["MethodNotAllowed"] === undefined) {
        return `${r.method} ${matching[0]!.template}: the document has no such operation, and ${r.status} is not its documented answer`;
      }
      if (r.allow === null || r.allow.split(/,\s*/).sort().join(",") !== allowed.sort().join(",")) {
        return `${r.method} ${matching[0]!.template}: 405 must list \`allow: ${allowed.join(", ")}\`, got \`${r.allow}\``;
      }
      return { where: "components.responses.MethodNotAllowed", response: components["MethodNotAllowed"] };
    }
    const operation = withMethod.item[method]!;
    const response = operation.responses?.[String(r.status)];
    if (response === undefined) return `${r.method} ${withMethod.template}: status ${r.status} is not documented`;
    return { where: `${r.method} ${withMethod.template} ${r.status}`, response };
  }

  /** What is wrong with one answer; empty when the document describes it exactly. */
  violations(r: RecordedResponse): string[] {
    const found = this.#responseFor(r);
    if (typeof found === "string") return [found];
    const content = found.response.content;
    if (content === undefined) return r.body === undefined ? [] : [`${found.where}: the document says no body, got one`];
    const mediaType = (r.contentType ?? "").split(";")[0]!.trim().toLowerCase();
    const media = content[mediaType];
    if (media === undefined) return [`${found.where}: media type \`${mediaType}\` is not documented (${Object.keys(content).join(", ")})`];
    const ref = media.schema?.$ref;
    const validate = ref === undefined ? this.#ajv.compile(media.schema ?? {}) : this.#validator(ref);
    if (validate(r.body)) return [];
    const errors = (validate.errors ?? [])
      .slice(0, 3)
      .map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`)
      .join("; ");
    return [`${found.where}: the body does not match ${ref ?? "its schema"}: ${errors}`];
  }
}

/** Collects answers and checks them all against a served document at the end. */
export class ResponseRecorder {
  readonly responses: RecordedResponse[] = [];

  /** Records an answer to `method url`; `baseUrl` ends in `/v1`. */
  record(baseUrl: string, method: string, url: string, response: Response, body: unknown): void {
    const base = new URL(baseUrl);
    const path = new URL(url).pathname;
    if (!path.startsWith(base.pathname)) return;
    this.responses.push({
      method: method.toUpperCase(),
      path: path.slice(base.pathname.length) || "/",
      status: response.status,
      contentType: response.headers.get("content-type"),
      body,
      allow: response.headers.get("allow"),
    });
  }

  /** Every violation of the served document, one line each, the same one counted once. */
  async violations(baseUrl: string): Promise<string[]> {
    const doc = await (await fetch(`${baseUrl}/openapi.json`)).json();
    const conformance = new OpenApiConformance(doc);
    return [...new Set(this.responses.flatMap((r) => conformance.violations(r)))];
  }

  /** Throws when any recorded answer breaks the served document. */
  async check(baseUrl: string): Promise<void> {
    if (this.responses.length === 0) return;
    const found = await this.violations(baseUrl);
    if (found.length > 0) throw new Error(`responses the OpenAPI document does not describe:\n${found.join("\n")}`);
  }
}
