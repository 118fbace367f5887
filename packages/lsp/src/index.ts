// Public face of the language-server package: named re-exports only.
export { type ProvedWarning, type Prover, type ServerOptions, SERVER_NAME, serveStreams, startServer, toLspDiagnostic } from "./server.js";
export {
  analyse,
  DOCUMENT_TOO_LARGE,
  kindOfUri,
  LSP_LIMITS,
  type Analysis,
  type DocumentKind,
  type ParameterDeclaration,
  type PolicyRegion,
} from "./source.js";
export { FUNCTIONS, VARIABLES, builtinDoc, type BuiltinDoc } from "./builtins.js";
