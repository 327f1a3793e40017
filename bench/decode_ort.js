// Greedy decoding of a GenAI-format decoder (bench/gen_decoder.py) in ONNX Runtime
// (onnxruntime-node), the reference side of bench/decode_bench.py.
// usage: node bench/decode_ort.js MODEL.onnx PROMPT.npy STEPS OUTDIR [--threads T] [--level L]
//        [--warmups W]
// PROMPT.npy: int64 [P] token ids. Runs W warm-ups (default 1: the prompt and one step, discarded), then
// the prompt (P tokens, empty past) and STEPS greedy steps, each feeding the presents back as
// the pasts. Writes OUTDIR/logits.npy ([STEPS + 1, vocab]: the prompt's last row, then each
// step's) and prints JSON: tokens (the STEPS + 1 argmax ids), prompt and decode wall and CPU ms
// (process.cpuUsage: user + sys of every thread), peak RSS in KiB (VmHWM).
'use strict';
const fs = require('fs');
const path = require('path');
const dir = process.env.OM_ORACLE_DIR || path.join(require('os').homedir(), '.cache', 'om-oracle');
const ort = require(path.join(dir, 'node_modules', 'onnxruntime-node'));

function readI64Npy(file) {
  const b = fs.readFileSync(file);
  const hlen = b[6] === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const hstart = b[6] === 1 ? 10 : 12;
  const header = b.toString('latin1', hstart, hstart + hlen);
  if (!/'descr':\s*'<i8'/.test(header)) throw new Error(`${file}: want int64`);
  const raw = b.subarray(hstart + hlen);
  const copy = new Uint8Array(raw.length); copy.set(raw);
  return new BigInt64Array(copy.buffer);
}

function writeNpy(file, descr, shape, bytes) {
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}), }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const pre = Buffer.alloc(10); pre.write('\x93NUMPY', 0, 'latin1'); pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), bytes]));
}

function ids(arr) {
  return new ort.Tensor('int64', BigInt64Array.from(arr, BigInt), [1, arr.length]);
}

async function main() {
  const argv = process.argv.slice(2);
  const [model, promptFile, stepsArg, outdir] = argv;
  const steps = Number(stepsArg);
  const opts = { graphOptimizationLevel: 'all', intraOpNumThreads: 1, interOpNumThreads: 1 };
  let warmups = 1;
  for (let i = 4; i < argv.length; i++) {
    if (argv[i] === '--threads') opts.intraOpNumThreads = Number(argv[++i]);
    else if (argv[i] === '--level') opts.graphOptimizationLevel = argv[++i];
    else if (argv[i] === '--warmups') warmups = Number(argv[++i]);
  }
  const sess = await ort.InferenceSession.create(model, opts);
  const pastNames = sess.inputNames.filter(n => n.startsWith('past_key_values.'));
  const usesPos = sess.inputNames.includes('position_ids');
  // the past's shape and type: the model's "decoder" metadata (bench/gen_decoder.py), which
  // decode_bench.py passes in DECODER_META
  const meta = JSON.parse(process.env.DECODER_META || '{}');
  const ftype = meta.dtype === 'fp16' ? 'float16' : 'float32';
  const prompt = Array.from(readI64Npy(promptFile), Number);

  async function step(tokens, past, pastLen) {
    const feeds = { input_ids: ids(tokens),
      attention_mask: ids(new Array(pastLen + tokens.length).fill(1)) };
    if (usesPos) feeds.position_ids = ids(tokens.map((_, i) => pastLen + i));
    pastNames.forEach((n, i) => { feeds[n] = past[i]; });
    const res = await sess.run(feeds);
    const presents = pastNames.map(n => res[n.replace('past_key_values.', 'present.')]);
    return { logits: res.logits, presents };
  }
  function emptyPast() {
    const Arr = ftype === 'float16' ? Uint16Array : Float32Array;
    return pastNames.map(() => new ort.Tensor(ftype, new Arr(0), [1, meta.kv_heads, 0,
      meta.head_size]));
  }
  function lastRow(t) {
    const V = t.dims[2], S = t.dims[1];
    const row = t.data.subarray((S - 1) * V, S * V);
    let best = 0, bv = -Infinity;
    const f = ftype === 'float16' ? h => halfToFloat(h) : x => x;
    for (let i = 0; i < V; i++) { const v = f(row[i]); if (v > bv) { bv = v; best = i; } }
    return { row, best };
  }

  let r = null;
  for (let w = 0; w < warmups; w++) { // warm-up rounds
    r = await step(prompt, emptyPast(), 0);
    await step([lastRow(r.logits).best], r.presents, prompt.length);
    r = null; // the warm-up's logits are not held meanwhile (as decode_bench.py's omopt side)
  }

  const rows = [], tokens = [];
  let c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
  r = await step(prompt, emptyPast(), 0);
  const promptWall = Number(process.hrtime.bigint() - t0) / 1e6;
  const promptCpu = cpuMs(process.cpuUsage(c0));
  let lr = lastRow(r.logits);
  rows.push(Buffer.from(lr.row.buffer, lr.row.byteOffset, lr.row.byteLength));
  tokens.push(lr.best);
  c0 = process.cpuUsage(); t0 = process.hrtime.bigint();
  let pastLen = prompt.length;
  const stepMs = [];
  for (let s = 0; s < steps; s++) {
    const ts = process.hrtime.bigint();
    r = await step([tokens[tokens.length - 1]], r.presents, pastLen);
    stepMs.push(Number(process.hrtime.bigint() - ts) / 1e6);
    pastLen += 1;
    lr = lastRow(r.logits);
    rows.push(Buffer.from(lr.row.buffer, lr.row.byteOffset, lr.row.byteLength));
    tokens.push(lr.best);
  }
  const decodeWall = Number(process.hrtime.bigint() - t0) / 1e6;
  const decodeCpu = cpuMs(process.cpuUsage(c0));
  fs.mkdirSync(outdir, { recursive: true });
  writeNpy(path.join(outdir, 'logits.npy'), ftype === 'float16' ? '<f2' : '<f4',
    [rows.length, meta.vocab], Buffer.concat(rows));
  console.log(JSON.stringify({ tokens, prompt_ms: promptWall, prompt_cpu_ms: promptCpu,
    decode_ms: decodeWall, decode_cpu_ms: decodeCpu, step_ms: stepMs,
    peak_rss_kib: peakRssKib() }));
}

function cpuMs(c) { return (c.user + c.system) / 1e3; }

// VmHWM of /proc/self/status: not getrusage's maxRSS, which Linux starts from the parent's
// resident set at fork (a parent that read the model gave this process its size)
function peakRssKib() {
  const m = /VmHWM:\s*(\d+)/.exec(fs.readFileSync('/proc/self/status', 'latin1'));
  return m ? Number(m[1]) : process.resourceUsage().maxRSS;
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

main().catch(e => { console.error(String(e && e.message || e)); process.exit(1); });
