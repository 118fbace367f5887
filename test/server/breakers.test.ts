// Runs the contracts and breakers suite against a real server on SQLite and on PostgreSQL.
import { breakersHttpSuite } from "./breakers-http.js";
import { forEachStore } from "./targets.js";

forEachStore("contracts and breakers over HTTP", breakersHttpSuite);
