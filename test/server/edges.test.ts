// Runs the contract-edge suite against a real server on SQLite and on PostgreSQL.
import { edgesHttpSuite } from "./edges-http.js";
import { forEachStore } from "./targets.js";

forEachStore("v1 edges", edgesHttpSuite);
