// Runs the preview and failure suites against a real server on SQLite and on PostgreSQL.
import { failureSuite, previewSuite } from "./preview-http.js";
import { forEachStore } from "./targets.js";

forEachStore("preview", previewSuite);
forEachStore("failure", failureSuite);
