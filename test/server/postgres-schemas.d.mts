// Types of postgres-schemas.mjs.

/** Why PostgreSQL at `url` cannot be used, or null when it answers. */
export declare function postgresProblem(url: string): Promise<string | null>;
/** Drops `schema` and everything in it. */
export declare function dropSchema(url: string, schema: string): Promise<void>;
