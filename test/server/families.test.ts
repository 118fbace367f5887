// Runs the grant-family suite against a real server on SQLite and on PostgreSQL.
import { familiesHttpSuite } from "./families-http.js";
import { forEachStore } from "./targets.js";

forEachStore("grant families over HTTP", familiesHttpSuite);
