"""One InferenceSession run from many threads at once, and its life cycle (close, del, with).

Each thread runs the session on inputs of its own; every output must have the bytes the same
session gives for the same inputs run alone (docs/session.md)."""
import os
import threading
import time

import numpy as np
import pytest

import omopt

SRC = os.environ.get('OMOPT_SOURCE', os.path.join(os.path.dirname(__file__), '..', '..'))
EXAMPLE = os.path.join(SRC, 'examples', 'tiny_shuffle.onnx')
SHARED = os.environ.get('OMOPT_SHARED', os.path.join(SRC, '..', 'shared'))
THREADS, RUNS = 8, 25


def feeds_of(s, seed):
    """Inputs for s's example model: an image with values from seed."""
    rng = np.random.default_rng(seed)
    [a] = s.get_inputs()
    shape = [d if isinstance(d, int) else 1 for d in a.shape]
    return {a.name: rng.standard_normal(shape).astype(np.float32)}


def same(a, b):
    return len(a) == len(b) and all(x.dtype == y.dtype and x.shape == y.shape and
                                    x.tobytes() == y.tobytes() for x, y in zip(a, b))


def hammer(s, variants):
    """THREADS threads x RUNS runs of s over the variants; the runs whose outputs differ from
    the variant's reference, and the errors raised."""
    refs = [s.run(None, f) for f in variants]
    bad, errors = [], []

    def work(t):
        try:
            for k in range(RUNS):
                v = (t + k) % len(variants)
                if not same(s.run(None, variants[v]), refs[v]):
                    bad.append((t, k))
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)
    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return bad, errors


@pytest.mark.parametrize('threads', [1, 2])
def test_one_session_many_threads(threads):
    s = omopt.InferenceSession(EXAMPLE, threads=threads)
    bad, errors = hammer(s, [feeds_of(s, seed) for seed in range(3)])
    assert errors == [] and bad == []


def test_shared_model_many_threads():
    d = os.path.join(SHARED, 'models', 'shufflenet')
    if not os.path.isdir(d):
        pytest.skip(f'{d} is missing (../shared/models)')
    s = omopt.InferenceSession(os.path.join(d, 'model.onnx'))
    x = {a.name: np.load(os.path.join(d, 'in', a.name + '.npy')) for a in s.get_inputs()}
    variants = [{k: v * np.float32(1 + i / 8) for k, v in x.items()} for i in range(3)]
    bad, errors = hammer(s, variants)
    assert errors == [] and bad == []


def test_run_after_close_or_del():
    s = omopt.InferenceSession(EXAMPLE)
    f = feeds_of(s, 0)
    want = s.run(None, f)
    s.close()
    with pytest.raises(omopt.InvalidInput, match='closed'):
        s.run(None, f)
    s.close()  # again: nothing
    s = omopt.InferenceSession(EXAMPLE)
    s.__del__()
    with pytest.raises(omopt.InvalidInput, match='closed'):
        s.run(None, f)
    with omopt.InferenceSession(EXAMPLE) as s:
        assert same(s.run(None, f), want)
    with pytest.raises(omopt.InvalidInput, match='closed'):
        s.run(None, f)


def test_close_while_runs_are_under_way():
    """close() from one thread while others run: the runs under way finish with the right
    outputs, the next ones raise InvalidInput, nothing crashes."""
    s = omopt.InferenceSession(EXAMPLE)
    f = feeds_of(s, 1)
    want = s.run(None, f)
    started, wrong, ended = threading.Barrier(THREADS + 1), [], []

    def work():
        started.wait()
        for _ in range(100000):
            try:
                if not same(s.run(None, f), want):
                    wrong.append(1)
            except omopt.InvalidInput as e:
                ended.append(str(e))
                return
    threads = [threading.Thread(target=work) for _ in range(THREADS)]
    for t in threads:
        t.start()
    started.wait()
    time.sleep(0.05)
    s.close()
    for t in threads:
        t.join()
    assert wrong == [] and len(ended) == THREADS and all('closed' in e for e in ended)


def test_misaligned_input():
    """An array at an odd address (a view into a byte buffer) gives the aligned one's outputs."""
    s = omopt.InferenceSession(EXAMPLE)
    f = feeds_of(s, 2)
    [(name, x)] = f.items()
    buf = np.zeros(x.nbytes + 1, dtype=np.uint8)
    odd = buf[1:].view(np.float32).reshape(x.shape)
    odd[...] = x
    assert odd.ctypes.data % 4 != 0
    assert same(s.run(None, {name: odd}), s.run(None, f))


def test_copies_refused():
    """A copy would share the library's session with a life cycle of its own (double free)."""
    import copy
    import pickle
    s = omopt.InferenceSession(EXAMPLE)
    for make in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError):
            make(s)
    with pytest.raises(omopt.InvalidInput, match='never made'):
        object.__new__(omopt.InferenceSession).run(None, {})
