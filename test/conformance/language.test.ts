// The language conformance vectors, run against the library through its adapter.
import { libraryAdapter } from "./language-adapter.js";
import { runLanguageVectors } from "./language-vectors.js";

runLanguageVectors(libraryAdapter);
