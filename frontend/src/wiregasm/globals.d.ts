// Set by vite.config.ts from the installed @goodtools/wiregasm package.
declare const __WIREGASM_VERSION__: string;
declare const __WIREGASM_WASM_BYTES__: number;
