// Loads a profile with speedscope's own importer (the npm package's
// bundle, run under node with the browser stubbed out) and prints what it
// read as JSON: per profile (one per thread) its name, unit and total
// weight, and per frame its name, self and total weight (speedscope counts
// a recursive frame once in its total).
//   node speedscope-import.js SPEEDSCOPE_RELEASE_DIR PROFILE
// The importer is not exported by the bundle: the promise of its module
// (the one the page's loadFileFromBase64 awaits) is found by what it is
// used for and kept on globalThis.  Exit 2 if this speedscope's bundle is
// not laid out that way.
'use strict';
const fs = require('fs'), vm = require('vm'), path = require('path');
const [dir, file] = process.argv.slice(2);
const bundle = fs.readdirSync(dir).find(f => /^speedscope-.*\.js$/.test(f));
let src = fs.readFileSync(path.join(dir, bundle), 'utf8');
const use = /\(await ([\w$]+)\)\.importProfileGroupFromBase64/.exec(src);
const decl = use && new RegExp('var ' + use[1].replace(/\$/g, '\\$') + '=Promise\\.resolve\\(\\)\\.then\\([^;]*;').exec(src);
if (!decl) {
  console.error('speedscope-import: the importer was not found in ' + bundle);
  process.exit(2);
}
const at = decl.index + decl[0].length;
src = src.slice(0, at) + `globalThis.__instrImporter=${use[1]};` + src.slice(at);

// The page's objects: anything read from them is another such object.
function stub() {
  const f = function () {};
  return new Proxy(f, {
    get(t, k) { return k === Symbol.toPrimitive ? () => 0 : k === 'then' ? undefined : stub(); },
    apply() { return stub(); }, construct() { return stub(); }, set() { return true; },
  });
}
const ctx = {console: {log() {}, warn() {}, error: console.error}, setTimeout, clearTimeout, TextDecoder, TextEncoder,
             atob, btoa, URL, performance, queueMicrotask, window: stub(), document: stub(), navigator: stub(),
             location: stub()};
ctx.self = ctx;
vm.createContext(ctx);
try {
  vm.runInContext(src, ctx); // the page's own start fails on the stubs, after the importer is set up
} catch (e) {}
(async () => {
  const mod = await ctx.__instrImporter;
  const data = fs.readFileSync(file).toString('base64');
  const group = await mod.importProfileGroupFromBase64(path.basename(file), data);
  if (!group) throw new Error('speedscope did not recognise the file');
  const out = {profiles: []};
  for (const p of group.profiles) {
    const frames = [];
    p.forEachFrame(f => frames.push({name: f.name, self: f.getSelfWeight(), total: f.getTotalWeight()}));
    out.profiles.push({name: p.getName(), unit: p.getWeightUnit(), total: p.getTotalWeight(), frames});
  }
  process.stdout.write(JSON.stringify(out));
})().catch(e => {
  console.error('speedscope-import: ' + (e && e.stack || e));
  process.exit(1);
});
