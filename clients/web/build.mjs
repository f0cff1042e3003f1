// Builds the web client into dist/: esbuild bundles src/main.ts (and the
// generated client it imports) into one ES module, and index.html and
// style.css are copied beside it. Type-checking is tsc's (npm run check).
//
//   node build.mjs                     build dist/
//   node build.mjs --serve HOST:PORT   build, then serve dist/ there
import { copyFile, mkdir } from "node:fs/promises";
import * as esbuild from "esbuild";

const options = {
  entryPoints: ["src/main.ts"],
  bundle: true,
  format: /** @type {const} */ ("esm"),
  target: "es2022",
  sourcemap: true,
  outfile: "dist/main.js",
  logLevel: /** @type {const} */ ("warning"),
};

await mkdir("dist", { recursive: true });
for (const f of ["index.html", "style.css"]) {
  await copyFile(`src/${f}`, `dist/${f}`);
}
const serve = process.argv.indexOf("--serve");
if (serve < 0) {
  await esbuild.build(options);
} else {
  const [host, port] = (process.argv[serve + 1] ?? "127.0.0.1:8000").split(":");
  const ctx = await esbuild.context(options);
  const { hosts, port: bound } = await ctx.serve({ servedir: "dist", host: host ?? "127.0.0.1", port: Number(port ?? 8000) });
  console.log(`serving dist/ at http://${hosts[0] ?? host}:${bound}/ (start the server with SOLITAIRE_CORS_ORIGINS=http://${hosts[0] ?? host}:${bound})`);
}
