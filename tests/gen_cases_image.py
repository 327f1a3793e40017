#!/usr/bin/python3
"""ImageDecoder cases (issue 35) in tests/cases/image/<format>_<pixel format>/ (ONNX's backend
test layout: model.onnx, test_data_set_0/input_0.pb the encoded bytes, output_0.pb the image):
one 29 x 19 RGB picture (gradients, a disc, noise: odd sizes, so JPEG's chroma subsampling
has partial blocks) encoded as JPEG (quality 90, 4:2:0), PNG, BMP (24-bit), WebP (lossy,
quality 80) and TIFF (LZW), each decoded as RGB, BGR and Grayscale.

Where the values come from: ONNX Runtime 1.30's CPU build (../shared/oracle, onnxruntime-node)
has no ImageDecoder kernel ("Could not find an implementation for ImageDecoder(20) node"; the
script asks it again each time and says what it answered). So the reference is what ONNX's
reference implementation of ImageDecoder computes (onnx.reference, ONNX 1.15 and later; this
machine's onnx 1.12 lacks it): Pillow opens the bytes; RGB is its array as it is, BGR that
array's channels reversed, Grayscale Pillow's convert("L") of the image as [H, W, 1]. Debian's
Pillow decodes with the same libjpeg-turbo, libpng, libwebp and libtiff omopt links.

    /usr/bin/python3 tests/gen_cases_image.py    # deterministic
"""
import io
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'cases', 'image')
ORT_STRINGS = os.path.join(HERE, 'ort_strings.js')
FORMATS = {  # name: Pillow's format and options
    'jpeg': ('JPEG', dict(quality=90, subsampling=2)),
    'png': ('PNG', {}),
    'bmp': ('BMP', {}),
    'webp': ('WEBP', dict(quality=80)),
    'tiff': ('TIFF', dict(compression='tiff_lzw')),
}


def picture():
    from PIL import Image
    rng = np.random.default_rng(20)
    hgt, wid = 19, 29
    yy, xx = np.mgrid[0:hgt, 0:wid]
    r = xx * 255 // (wid - 1)
    g = yy * 255 // (hgt - 1)
    b = np.where((xx - 14) ** 2 + (yy - 9) ** 2 < 36, 230, 40)
    img = np.stack([r, g, b], axis=2) + rng.integers(-12, 13, (hgt, wid, 3))
    return Image.fromarray(np.clip(img, 0, 255).astype(np.uint8), 'RGB')


def reference(data, pixel_format):
    """ONNX's reference ImageDecoder, in Pillow calls."""
    from PIL import Image
    img = Image.open(io.BytesIO(data))
    if pixel_format == 'Grayscale':
        return np.array(img.convert('L'))[:, :, None]
    a = np.array(img)
    return a[:, :, ::-1] if pixel_format == 'BGR' else a


def model(pixel_format):
    node = h.make_node('ImageDecoder', ['encoded'], ['image'], pixel_format=pixel_format)
    g = h.make_graph([node], 'image_decoder', [h.make_tensor_value_info('encoded', T.UINT8, [None])],
                     [h.make_tensor_value_info('image', T.UINT8, [None, None, None])])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 20)])
    m.ir_version = 9
    return m


def ask_ort(m, data):
    """ONNX Runtime's answer on m (its error message when it has none), or None without the
    oracle."""
    oracle = os.environ.get('OM_ORACLE_DIR', os.path.join(os.path.expanduser('~'), '.cache',
                                                          'om-oracle'))
    if not os.path.isdir(oracle) or not shutil.which('node'):
        return None
    with tempfile.TemporaryDirectory() as d:
        onnx.save(m, os.path.join(d, 'm.onnx'))
        with open(os.path.join(d, 'in.json'), 'w') as f:
            json.dump({'encoded': {'type': 'uint8', 'dims': [len(data)], 'data': list(data)}}, f)
        subprocess.run(['node', ORT_STRINGS, os.path.join(d, 'm.onnx'),
                        os.path.join(d, 'in.json'), os.path.join(d, 'out.json')],
                       check=True, env=dict(os.environ, OM_ORACLE_DIR=oracle), timeout=120)
        with open(os.path.join(d, 'out.json')) as f:
            return json.load(f)


def main():
    pic = picture()
    first = True
    for fmt, (pil_fmt, opts) in FORMATS.items():
        buf = io.BytesIO()
        pic.save(buf, pil_fmt, **opts)
        data = buf.getvalue()
        for pixel_format in ('RGB', 'BGR', 'Grayscale'):
            m = model(pixel_format)
            want = reference(data, pixel_format)
            if first:
                got = ask_ort(m, data)
                print('ONNX Runtime:', 'no oracle' if got is None else
                      got.get('error', 'ran') if isinstance(got, dict) else 'ran')
                if isinstance(got, list):  # it has a kernel now: it must agree
                    a = np.array(got[0]['data'], np.uint8).reshape(got[0]['dims'])
                    assert np.array_equal(a, want), 'ONNX Runtime and the reference differ'
                first = False
            d = os.path.join(OUT, f'{fmt}_{pixel_format.lower()}')
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(os.path.join(d, 'test_data_set_0'))
            onnx.save(m, os.path.join(d, 'model.onnx'))
            for name, a, nm in (('input_0', np.frombuffer(data, np.uint8), 'encoded'),
                                ('output_0', want, 'image')):
                with open(os.path.join(d, 'test_data_set_0', name + '.pb'), 'wb') as f:
                    f.write(nh.from_array(np.ascontiguousarray(a), nm).SerializeToString())
            print(os.path.basename(d), len(data), 'bytes ->', want.shape)


if __name__ == '__main__':
    main()
