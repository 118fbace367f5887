// Declarations of the type generator script, for tests that run it in memory.
export declare const generatedPath: string;
export declare function renderTypes(api: object): string;
