// `npm start`: the server from environment variables, stopped gracefully on SIGTERM and SIGINT.
import { failedToStart, runServerProcess } from "./run.js";

runServerProcess().catch(failedToStart);
