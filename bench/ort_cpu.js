// CPU time per run of ONNX Runtime (onnxruntime-node, single-threaded by default, optimizations off or at
// LEVEL), measured with process.cpuUsage (user+sys of the whole process) over N runs after one
// warm-up run: immune to the load of a shared machine, unlike wall time.
// usage: node bench/ort_cpu.js MODEL.onnx N [--level L] [--threads T] NAME=FILE.npy ...
// (--threads: ONNX Runtime's intra-op threads, default 1; inter-op stays 1)
// prints {"cpu_ms_per_run": X, "run_ms_median": Y}
'use strict';
const fs = require('fs');
const path = require('path');
const dir = process.env.OM_ORACLE_DIR || path.join(require('os').homedir(), '.cache', 'om-oracle');
const ort = require(path.join(dir, 'node_modules', 'onnxruntime-node'));
const NPY = { '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array], '|u1': ['uint8', Uint8Array],
  '|i1': ['int8', Int8Array], '|b1': ['bool', Uint8Array], '<f2': ['float16', Uint16Array] };

function readNpy(file) {
  const b = fs.readFileSync(file);
  const hlen = b[6] === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const hstart = b[6] === 1 ? 10 : 12;
  const header = b.toString('latin1', hstart, hstart + hlen);
  const [type, Arr] = NPY[/'descr':\s*'([^']+)'/.exec(header)[1]];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim())
    .filter(s => s).map(Number);
  const raw = b.subarray(hstart + hlen);
  const copy = new Uint8Array(raw.length); copy.set(raw);
  const data = new Arr(copy.buffer);
  return new ort.Tensor(type, type === 'bool' ? Array.from(data, x => !!x) : data, shape);
}

async function main() {
  const argv = process.argv.slice(2);
  const model = argv[0], n = Number(argv[1]);
  const opts = { graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1 };
  const feeds = {};
  for (let i = 2; i < argv.length; i++) {
    if (argv[i] === '--level') { opts.graphOptimizationLevel = argv[++i]; continue; }
    if (argv[i] === '--threads') { opts.intraOpNumThreads = Number(argv[++i]); continue; }
    const k = argv[i].indexOf('='); feeds[argv[i].slice(0, k)] = readNpy(argv[i].slice(k + 1));
  }
  const sess = await ort.InferenceSession.create(model, opts);
  await sess.run(feeds);
  const ts = [];
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const s = process.hrtime.bigint(); await sess.run(feeds);
    ts.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  const c = process.cpuUsage(c0);
  ts.sort((a, b) => a - b);
  console.log(JSON.stringify({ cpu_ms_per_run: (c.user + c.system) / 1e3 / n,
    run_ms_median: ts[Math.floor(ts.length / 2)] }));
}
main().catch(e => { console.error(String(e && e.message || e)); process.exit(1); });
