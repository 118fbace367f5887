// Public face of this package: named re-exports only.
export {};
