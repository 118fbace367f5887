// Public face of the CLI package: named re-exports only.
export { main, helpText } from "./main.js";
export { COMMANDS, findCommand } from "./commands/index.js";
export { EXIT, notYetAvailable } from "./command.js";
export type { Command } from "./command.js";
export type { Terminal, Writer } from "./terminal.js";
export { formatSarif, formatJson, formatText } from "./report.js";
