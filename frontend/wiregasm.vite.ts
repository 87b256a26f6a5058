// Ships Wiregasm (Wireshark compiled to WebAssembly) with the SPA without bundling it: the build
// copies wiregasm.js and the package's pre-compressed wiregasm.wasm.gz / wiregasm.data.gz to
// dist/wiregasm/<version>/, which the server sends with Content-Encoding: gzip and a one-year
// immutable cache (the version is in the path). The dev server serves the same URLs.

import { readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { Plugin } from "vite";

const require = createRequire(import.meta.url);
const packageDir = path.dirname(require.resolve("@goodtools/wiregasm/package.json"));
const dist = path.join(packageDir, "dist");

export const WIREGASM_VERSION: string = JSON.parse(
  readFileSync(path.join(packageDir, "package.json"), "utf8"),
).version;
export const WIREGASM_WASM_BYTES = statSync(path.join(dist, "wiregasm.wasm")).size;

/** Served name → [file in the package, media type, gzip-encoded]. */
const FILES: Record<string, [string, string, boolean]> = {
  "wiregasm.js": ["wiregasm.js", "text/javascript", false],
  "wiregasm.wasm.gz": ["wiregasm.wasm.gz", "application/wasm", true],
  "wiregasm.data.gz": ["wiregasm.data.gz", "application/octet-stream", true],
};

export function wiregasmAssets(): Plugin {
  const base = `/wiregasm/${WIREGASM_VERSION}/`;
  return {
    name: "tcplens-wiregasm-assets",
    config: () => ({
      define: {
        __WIREGASM_VERSION__: JSON.stringify(WIREGASM_VERSION),
        __WIREGASM_WASM_BYTES__: String(WIREGASM_WASM_BYTES),
      },
    }),
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const url = req.url?.split("?")[0] ?? "";
        if (!url.startsWith(base)) return next();
        const name = url.slice(base.length);
        const entry = FILES[name] ?? FILES[`${name}.gz`];
        if (!entry) return next();
        const [file, type, gzipped] = entry;
        res.setHeader("Content-Type", type);
        if (gzipped) res.setHeader("Content-Encoding", "gzip");
        res.end(readFileSync(path.join(dist, file)));
      });
    },
    generateBundle() {
      for (const [name, [file]] of Object.entries(FILES)) {
        this.emitFile({
          type: "asset",
          fileName: `wiregasm/${WIREGASM_VERSION}/${name}`,
          source: readFileSync(path.join(dist, file)),
        });
      }
    },
  };
}
