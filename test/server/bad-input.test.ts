// Runs the bad-input suite against a real server on SQLite and on PostgreSQL.
import { badInputSuite } from "./bad-input-http.js";
import { forEachStore } from "./targets.js";

forEachStore("bad input", badInputSuite);
