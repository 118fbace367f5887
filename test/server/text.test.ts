// Runs the hostile-text suite against a real server on SQLite and on PostgreSQL.
import { textHttpSuite } from "./text-http.js";
import { forEachStore } from "./targets.js";

forEachStore("v1 text", textHttpSuite);
