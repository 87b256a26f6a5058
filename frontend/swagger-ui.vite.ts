// Ships Swagger UI (the `swagger-ui-dist` package) with the build for the API explorer at
// /api/v1/docs: the server's docs page (backend/tcplens/api/docs.py) loads these files from
// dist/swagger-ui/, so the page works offline and loads nothing from another origin. The files are
// the package's own, less the line that points browsers to a source map we do not ship.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { Plugin } from "vite";

const require = createRequire(import.meta.url);
const packageDir = path.dirname(require.resolve("swagger-ui-dist/package.json"));

/** Served name → media type (the names the docs page asks for). */
const FILES: Record<string, string> = {
  "swagger-ui-bundle.js": "text/javascript",
  "swagger-ui.css": "text/css",
  "favicon-32x32.png": "image/png",
};
const BASE = "/swagger-ui/";
const SOURCE_MAP_COMMENT = /\n?(\/\/# sourceMappingURL=\S+|\/\*# sourceMappingURL=\S+ ?\*\/)\s*$/;

function contents(name: string): Buffer | string {
  const file = path.join(packageDir, name);
  return name.endsWith(".png")
    ? readFileSync(file)
    : readFileSync(file, "utf8").replace(SOURCE_MAP_COMMENT, "\n");
}

export function swaggerUiAssets(): Plugin {
  return {
    name: "tcplens-swagger-ui-assets",
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const url = req.url?.split("?")[0] ?? "";
        const name = url.startsWith(BASE) ? url.slice(BASE.length) : "";
        const type = FILES[name];
        if (!type) return next();
        res.setHeader("Content-Type", type);
        res.end(contents(name));
      });
    },
    generateBundle() {
      for (const name of Object.keys(FILES)) {
        this.emitFile({ type: "asset", fileName: `swagger-ui/${name}`, source: contents(name) });
      }
    },
  };
}
