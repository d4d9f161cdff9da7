// Names the widget's bundle by content (so it can be cached for a year), writes the module that
// starts it and the manifest the server reads, and brotli + gzip copies of each file.
// Usage: node widget-bundle.mjs <build dir (wasm-bindgen's output, minified)> <output dir>
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';

const [built, dir] = process.argv.slice(2);
fs.rmSync(dir, { recursive: true, force: true });
fs.mkdirSync(dir, { recursive: true });

const hash = (bytes) => createHash('sha256').update(bytes).digest('hex').slice(0, 16);
function put(stem, ext, bytes) {
  const name = `${stem}-${hash(bytes)}.${ext}`;
  fs.writeFileSync(path.join(dir, name), bytes);
  fs.writeFileSync(path.join(dir, `${name}.br`), zlib.brotliCompressSync(bytes, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  }));
  fs.writeFileSync(path.join(dir, `${name}.gz`), zlib.gzipSync(bytes, { level: 9 }));
  return name;
}

const wasm = put('parley_embed', 'wasm', fs.readFileSync(path.join(built, 'parley_embed_bg.opt.wasm')));
const js = put('parley_embed', 'js', fs.readFileSync(path.join(built, 'parley_embed.min.js')));
const css = put('parley', 'css', fs.readFileSync(path.join(built, 'panel.min.css')));
const boot = put('boot', 'js', Buffer.from(
  `import init from './${js}';\ninit({ module_or_path: new URL('./${wasm}', import.meta.url) });\n`,
));
fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ boot, js, wasm, css }, null, 2) + '\n');
for (const name of [wasm, js, css, boot]) {
  const raw = fs.statSync(path.join(dir, name)).size;
  const br = fs.statSync(path.join(dir, `${name}.br`)).size;
  console.log(`${dir}/${name}: ${raw} bytes, ${br} brotli`);
}
