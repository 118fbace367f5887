// Runs the HTTP behaviour suite against a real server on SQLite and on PostgreSQL.
import { grantsHttpSuite } from "./grants-http.js";
import { forEachStore } from "./targets.js";

forEachStore("v1 over HTTP", grantsHttpSuite);
