// The CLI's version, reported in `--version` and in SARIF output.
export const CLI_VERSION = "0.2.0";
