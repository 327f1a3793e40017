#!/usr/bin/python3
"""Greedy decoding of a GenAI-format decoder (bench/gen_decoder.py) in omopt and ONNX Runtime.

    /usr/bin/python3 bench/decode_bench.py MODEL.onnx [--prompt 128] [--steps 32]
        [--threads 1,2] [--reps 2] [--ort-level all] [--runtimes omopt,ort] [--json OUT.json]
        [--markdown] [--ort-model TWIN.onnx | --ref-model TWIN.onnx]

A prompt of P random tokens (fixed seed), then T greedy steps, each feeding the presents back
as the pasts (attention_mask all ones, position_ids when the model takes them). omopt runs
through its Python package (python/: a session keeps its plan between runs) in a subprocess of
its own (`--worker`, so its peak RSS is the run's), ONNX Runtime through bench/decode_ort.js
(onnxruntime-node, graph optimizations at --ort-level, ONNX Runtime GenAI's default being all);
each run does --warmups warm-up rounds (the prompt and one step; default 1) first. For each thread count the two
runtimes alternate, --reps times. Reported per run: prompt tokens/s and decode tokens/s by wall
time and by CPU time (user + sys of the whole process), the argmax sequences and whether they
match, max |logits difference| over the largest |logit| (the steps up to the first divergence),
peak RSS of the omopt process, its RSS before the model was loaded, and the model's file size.
--ort-model: ONNX Runtime runs another model, e.g. the accuracy_level 0 twin of an
accuracy_level 4 model (gen_decoder.py with the same options and seed): level 4 lets ONNX
Runtime quantize activations to int8, so the reference is exact arithmetic instead.
--ref-model: ONNX Runtime runs MODEL for the speeds (at level 4 its int8 kernels) and that
twin once, at 1 thread, for the reference the tokens and logits are compared with.
Needs ../shared/oracle installed (node + onnxruntime-node) and the build's libomopt
(OMOPT_LIBRARY, default build/libomopt.so.0 beside this script's checkout).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def model_meta(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    for p in m.metadata_props:
        if p.key == 'decoder':
            return json.loads(p.value)
    raise SystemExit('%s: no "decoder" metadata (write the model with bench/gen_decoder.py)'
                     % path)


def rss_kib(field='VmRSS'):
    """This process's resident set (VmRSS) or its peak (VmHWM), KiB. Not getrusage's
    ru_maxrss: Linux carries the parent's resident set at fork into the child's (a parent that
    read the model gave every worker its size)."""
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith(field + ':'):
                return int(line.split()[1])
    return 0


def greedy_omopt(model, meta, prompt, steps, threads, exact=False, warmups=1):
    """The greedy loop in omopt; returns (dict of timings and tokens, logits [steps + 1, V])."""
    import omopt
    base_rss = rss_kib()
    sess = omopt.InferenceSession(model, threads=threads, exact=exact)
    names = [i.name for i in sess.get_inputs()]
    past_names = [n for n in names if n.startswith('past_key_values.')]
    out_names = [o.name for o in sess.get_outputs()]
    fdt = np.float16 if meta['dtype'] == 'fp16' else np.float32

    def step(tokens, past, past_len):
        feeds = {'input_ids': np.array([tokens], np.int64),
                 'attention_mask': np.ones((1, past_len + len(tokens)), np.int64)}
        if 'position_ids' in names:
            feeds['position_ids'] = np.arange(past_len, past_len + len(tokens),
                                              dtype=np.int64)[None]
        feeds.update(zip(past_names, past))
        outs = dict(zip(out_names, sess.run(None, feeds)))
        return outs['logits'], [outs[n.replace('past_key_values.', 'present.')]
                                for n in past_names]

    empty = [np.zeros((1, meta['kv_heads'], 0, meta['head_size']), fdt) for _ in past_names]
    for _ in range(warmups):
        lg, pres = step(prompt, empty, 0)
        step([int(np.argmax(lg[0, -1]))], pres, len(prompt))
        lg = pres = None  # the warm-up's logits (a prompt's: tens of MB) are not held meanwhile
    c0, t0 = time.process_time(), time.perf_counter()
    lg, pres = step(prompt, empty, 0)
    r = {'prompt_ms': (time.perf_counter() - t0) * 1e3,
         'prompt_cpu_ms': (time.process_time() - c0) * 1e3}
    rows = [lg[0, -1].copy()]
    tokens = [int(np.argmax(lg[0, -1]))]
    c0, t0 = time.process_time(), time.perf_counter()
    past_len = len(prompt)
    for _ in range(steps):
        lg, pres = step([tokens[-1]], pres, past_len)
        past_len += 1
        rows.append(lg[0, -1].copy())
        tokens.append(int(np.argmax(lg[0, -1])))
    r.update(decode_ms=(time.perf_counter() - t0) * 1e3,
             decode_cpu_ms=(time.process_time() - c0) * 1e3, tokens=tokens,
             base_rss_kib=base_rss,
             peak_rss_kib=rss_kib('VmHWM'))
    return r, np.stack(rows)


def env_omopt():
    env = dict(os.environ)
    env.setdefault('OMOPT_LIBRARY', os.path.join(ROOT, 'build', 'libomopt.so.0'))
    env['PYTHONPATH'] = os.path.join(ROOT, 'python') + os.pathsep + env.get('PYTHONPATH', '')
    return env


def run_omopt(model, meta, prompt_file, steps, threads, outdir, warmups=1):
    # the metadata goes by the environment, as to decode_ort.js: reading it from the model in
    # the worker (onnx.load) would put the whole file in its peak RSS
    env = dict(env_omopt(), DECODER_META=json.dumps(meta))
    p = subprocess.run([sys.executable, os.path.abspath(__file__), model, '--worker',
                        prompt_file, '--steps', str(steps), '--threads', str(threads),
                        '--warmups', str(warmups), '--out', outdir], capture_output=True, text=True, env=env)
    if p.returncode:
        raise RuntimeError('omopt worker failed: ' + p.stderr.strip()[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1]), np.load(os.path.join(outdir,
                                                                               'logits.npy'))


def run_ort(model, meta, prompt_file, steps, threads, outdir, level, warmups=1):
    env = dict(os.environ, DECODER_META=json.dumps(meta))
    p = subprocess.run(['node', os.path.join(HERE, 'decode_ort.js'), model, prompt_file,
                        str(steps), outdir, '--threads', str(threads), '--level', level,
                        '--warmups', str(warmups)],
                       capture_output=True, text=True, env=env)
    if p.returncode:
        raise RuntimeError('ONNX Runtime failed: ' + p.stderr.strip()[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1]), np.load(os.path.join(outdir,
                                                                               'logits.npy'))


def compare(ro, lo, rr, lr):
    """argmax match, first divergence, max |diff| / max |ref| over the steps before it."""
    to, tr = ro['tokens'], rr['tokens']
    first = next((i for i, (a, b) in enumerate(zip(to, tr)) if a != b), len(to))
    n = min(first + 1, len(lo))  # the step that diverged still had the same inputs
    a, b = lo[:n].astype(np.float64), lr[:n].astype(np.float64)
    rel = float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))
    return {'match': to == tr, 'first_divergence': None if to == tr else first,
            'max_rel_diff': rel}


def rates(r, P, T):
    return {'prompt_tok_s': P / r['prompt_ms'] * 1e3, 'prompt_tok_cpu_s':
            P / r['prompt_cpu_ms'] * 1e3, 'decode_tok_s': T / r['decode_ms'] * 1e3,
            'decode_tok_cpu_s': T / r['decode_cpu_ms'] * 1e3}


def bench(a):
    meta = model_meta(a.model)
    size = os.path.getsize(a.model)
    rng = np.random.default_rng(a.seed)
    prompt = rng.integers(0, meta['vocab'], size=a.prompt).astype(np.int64)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        pf = os.path.join(tmp, 'prompt.npy')
        np.save(pf, prompt)
        ref = None
        if a.ref_model and 'omopt' in a.runtimes:
            ref = run_ort(a.ref_model, meta, pf, a.steps, 1, os.path.join(tmp, 'x'),
                          a.ort_level)
        for t in [int(x) for x in a.threads.split(',')]:
            for rep in range(a.reps):
                row = {'threads': t, 'rep': rep, 'file_mib': size / 2 ** 20}
                if 'omopt' in a.runtimes:
                    ro, lo = run_omopt(a.model, meta, pf, a.steps, t, os.path.join(tmp, 'o'),
                                       a.warmups)
                    row.update(omopt=rates(ro, a.prompt, a.steps), tokens_omopt=ro['tokens'],
                               omopt_peak_rss_mib=ro['peak_rss_kib'] / 1024,
                               omopt_base_rss_mib=ro['base_rss_kib'] / 1024)
                if 'ort' in a.runtimes:
                    rr, lr = run_ort(a.ort_model or a.model, meta, pf, a.steps, t,
                                     os.path.join(tmp, 'r'), a.ort_level, a.warmups)
                    row.update(ort=rates(rr, a.prompt, a.steps), tokens_ort=rr['tokens'],
                               ort_peak_rss_mib=rr['peak_rss_kib'] / 1024)
                if 'omopt' in row and ref:
                    row.update(compare(ro, lo, *ref))
                    if 'ort' in row:
                        row['ort_rel_diff'] = compare(ro, lo, rr, lr)['max_rel_diff']
                elif 'omopt' in row and 'ort' in row:
                    row.update(compare(ro, lo, rr, lr))
                rows.append(row)
                print(summary(row), flush=True)
    if a.markdown and any('match' in r for r in rows):
        print(markdown(a.model, rows))
    if a.json:
        json.dump({'model': a.model, 'meta': meta, 'prompt': a.prompt, 'steps': a.steps,
                   'rows': rows}, open(a.json, 'w'), indent=1)
    both = [r for r in rows if 'match' in r]
    if both:
        ok = all(r['match'] and r['max_rel_diff'] <= 1e-2 for r in both)
        print('acceptance (same argmax over %d steps, logits within 1e-2): %s'
              % (a.steps, 'yes' if ok else 'NO'))
        return 0 if ok else 1
    return 0


def markdown(model, rows):
    """one table row per thread count: medians over the reps of tokens/s by wall and CPU time
    (ratios omopt / ONNX Runtime), the spread of each one's decode wall rate over the reps (max /
    min), agreement, omopt's peak RSS above its RSS before the model was loaded, ONNX Runtime's
    peak RSS (its process whole), the file"""
    med = lambda v: float(np.median(v))  # noqa: E731
    out = []
    for t in sorted({r['threads'] for r in rows}):
        rs = [r for r in rows if r['threads'] == t and 'match' in r]
        v = {(rt, k): med([r[rt][k] for r in rs]) for rt in ('omopt', 'ort')
             for k in rs[0]['omopt']}
        spread = ['%.1f' % (max(w) / min(w)) for w in
                  ([r[rt]['decode_tok_s'] for r in rs] for rt in ('omopt', 'ort'))]
        out.append('| %s | %d | %.0f / %.0f (%.2f) | %.0f / %.0f (%.2f) | %.1f / %.1f (%.2f) | '
                   '%.1f / %.1f (%.2f) | %s | %s, %.1e | %.0f / %.0f / %.0f MiB |' % (
                       os.path.basename(model), t,
                       v['omopt', 'prompt_tok_s'], v['ort', 'prompt_tok_s'],
                       v['omopt', 'prompt_tok_s'] / v['ort', 'prompt_tok_s'],
                       v['omopt', 'prompt_tok_cpu_s'], v['ort', 'prompt_tok_cpu_s'],
                       v['omopt', 'prompt_tok_cpu_s'] / v['ort', 'prompt_tok_cpu_s'],
                       v['omopt', 'decode_tok_s'], v['ort', 'decode_tok_s'],
                       v['omopt', 'decode_tok_s'] / v['ort', 'decode_tok_s'],
                       v['omopt', 'decode_tok_cpu_s'], v['ort', 'decode_tok_cpu_s'],
                       v['omopt', 'decode_tok_cpu_s'] / v['ort', 'decode_tok_cpu_s'],
                       ' / '.join(spread), 'same' if all(r['match'] for r in rs) else 'DIFFER',
                       max(r['max_rel_diff'] for r in rs),
                       med([r['omopt_peak_rss_mib'] - r['omopt_base_rss_mib'] for r in rs]),
                       med([r['ort_peak_rss_mib'] for r in rs]), rs[0]['file_mib']))
    return '\n'.join(out)


def summary(row):
    """one line: tokens/s by wall and CPU time per runtime, agreement, RSS"""
    s = 'threads %d rep %d:' % (row['threads'], row['rep'])
    for rt in ('omopt', 'ort'):
        if rt in row:
            r = row[rt]
            s += ' %s prompt %.1f tok/s (cpu %.1f) decode %.1f tok/s (cpu %.1f) |' % (
                rt, r['prompt_tok_s'], r['prompt_tok_cpu_s'], r['decode_tok_s'],
                r['decode_tok_cpu_s'])
    if 'match' in row:
        s += ' argmax %s, max|diff|/max|ref| %.2e |' % (
            'same' if row['match'] else 'DIFFER from step %d' % row['first_divergence'],
            row['max_rel_diff'])
        if 'ort_rel_diff' in row:
            s += ' (the reference twin; vs ONNX Runtime on MODEL %.2e) |' % row['ort_rel_diff']
    else:
        s += ' tokens %s |' % (row.get('tokens_omopt') or row.get('tokens_ort'))[:8]
    if 'omopt' in row:
        s += ' omopt RSS %.1f MiB (base %.1f)' % (row['omopt_peak_rss_mib'],
                                                 row['omopt_base_rss_mib'])
    if 'ort' in row:
        s += ' ORT RSS %.1f MiB' % row['ort_peak_rss_mib']
    return s + ' file %.1f MiB' % row['file_mib']


def worker(a):
    meta = json.loads(os.environ['DECODER_META'])
    prompt = [int(x) for x in np.load(a.worker)]
    r, logits = greedy_omopt(a.model, meta, prompt, a.steps, a.threads, a.exact, a.warmups)
    os.makedirs(a.out, exist_ok=True)
    np.save(os.path.join(a.out, 'logits.npy'), logits)
    print(json.dumps(r))
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('model')
    p.add_argument('--prompt', type=int, default=128)
    p.add_argument('--steps', type=int, default=32)
    p.add_argument('--threads', default='1,2')
    p.add_argument('--reps', type=int, default=2)
    p.add_argument('--ort-level', default='all')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--warmups', type=int, default=1,
                   help='warm-up rounds (the prompt and one step) before the timed run, in both '
                   'runtimes (default 1)')
    p.add_argument('--json')
    p.add_argument('--ort-model', help='the model ONNX Runtime runs instead (the same weights '
                   'at accuracy_level 0: exact arithmetic for an accuracy_level 4 model)')
    p.add_argument('--ref-model', help='the model whose ONNX Runtime outputs the tokens and '
                   'logits are compared with (the accuracy_level 0 twin), ONNX Runtime\'s '
                   'speed still measured on MODEL')
    p.add_argument('--markdown', action='store_true',
                   help='a table row per thread count (medians) for bench/README.md')
    p.add_argument('--runtimes', default='omopt,ort', help='omopt,ort (default), omopt or ort')
    p.add_argument('--worker', help=argparse.SUPPRESS)  # the prompt .npy: run omopt only
    p.add_argument('--out', help=argparse.SUPPRESS)
    p.add_argument('--exact', action='store_true', help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.ort_model and a.ref_model:
        p.error('--ort-model and --ref-model exclude each other')
    if a.worker:
        a.threads = int(a.threads)
        return worker(a)
    return bench(a)


if __name__ == '__main__':
    sys.exit(main())
