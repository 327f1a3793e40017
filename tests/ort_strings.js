#!/usr/bin/env node
// ort_strings.js — ONNX Runtime (../shared/oracle's install) on a model whose inputs and outputs
// may be string tensors, which ort_run.js's .npy files cannot carry: for gen_cases_text.py.
//   usage: node ort_strings.js MODEL.onnx IN.json OUT.json
// IN.json: {name: {type, dims, data}} (data a flat list; int64 as decimal strings);
// OUT.json: [{name, type, dims, data}] in graph output order, or {error: message}.
'use strict';
const fs = require('fs');
const path = require('path');
const dir = process.env.OM_ORACLE_DIR || path.join(require('os').homedir(), '.cache', 'om-oracle');
const ort = require(path.join(dir, 'node_modules', 'onnxruntime-node'));
const ARR = { float32: Float32Array, int32: Int32Array, int64: BigInt64Array, uint8: Uint8Array };

async function main() {
  const [model, inFile, outFile] = process.argv.slice(2);
  const spec = JSON.parse(fs.readFileSync(inFile, 'utf8'));
  const feeds = {};
  for (const [name, t] of Object.entries(spec)) {
    let data = t.data;
    if (t.type === 'int64') data = BigInt64Array.from(data, x => BigInt(x));
    else if (t.type === 'bool') data = data.map(x => !!x);
    else if (t.type !== 'string') data = ARR[t.type].from(data);
    feeds[name] = new ort.Tensor(t.type, data, t.dims);
  }
  let out;
  try {
    const sess = await ort.InferenceSession.create(model,
      { graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1 });
    const res = await sess.run(feeds);
    out = sess.outputNames.map(name => {
      const t = res[name];
      let data = Array.from(t.data);
      if (t.type === 'int64') data = data.map(x => x.toString());
      else if (t.type === 'bool') data = data.map(x => (x ? 1 : 0));
      return { name, type: t.type, dims: t.dims, data };
    });
  } catch (e) {
    out = { error: String(e && e.message || e) };
  }
  fs.writeFileSync(outFile, JSON.stringify(out));
}
main().catch(e => { console.error(String(e && e.message || e)); process.exit(1); });
