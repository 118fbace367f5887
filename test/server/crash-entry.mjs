// The server process of the crash tests: the shipped process, with fault hooks read from two
// variables that only these tests set (decision 0605). The shipped entry, server/dist/main.js,
// reads neither, so no deployment can carry a hook that kills the process.
import { failedToStart, runServerProcess } from "../../server/dist/run.js";

const crashBeforeCommitKey = process.env["AUTHORITY_TEST_CRASH_BEFORE_COMMIT"];
const crashAfterCommitKey = process.env["AUTHORITY_TEST_CRASH_AFTER_COMMIT"];
const faults =
  crashBeforeCommitKey === undefined && crashAfterCommitKey === undefined ? undefined : { crashBeforeCommitKey, crashAfterCommitKey };
runServerProcess(faults).catch(failedToStart);
